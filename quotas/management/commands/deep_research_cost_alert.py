from django.core.management.base import BaseCommand

from quotas import services


class Command(BaseCommand):
    help = "E-mail the admins if today's Deep Research cost passed UEDU_DEEP_RESEARCH_ALERT_USD (at most once a day)."

    def handle(self, *args, **options):
        status = services.cost_status()
        alert = services.send_cost_alert()
        if alert:
            self.stdout.write(
                f"alert sent for {alert.day}: ${alert.cost_usd:.4f} > ${alert.threshold_usd:.2f} to {alert.recipients or 'nobody'}"
            )
        else:
            self.stdout.write(
                f"no alert: {status.day} committed ${status.committed:.4f}, threshold ${status.alert_threshold:.2f}"
            )
