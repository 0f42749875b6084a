"""The role table: every role a user can hold, where it is held, the quota class it gives and the
permissions it grants. The one place a new role or permission is added; every check, on pages,
the API, the admin (its URL filters and actions included), the WebSocket and the services, asks
`channels_app.access.can(user, permission, scope)`, which reads this table.

A permission is held on a scope: the platform (no object), a channel, or a study. A role is held
through something the user is or has: the platform admin is an active superuser; staff is
Django's staff flag; the owner owns the channel (its accountable teacher); teacher, TA, Super TA
and student are memberships; a Super TA with an NDA on file for the channel holds `super_ta+nda`
beside `super_ta`; a researcher is listed on a study (governance, which says who when it is
ready: access.register_study_roles).

Two rules the table settles:
- The owner and a teacher member both manage the channel's settings and materials (a course may
  have co-teachers, and the channel page has always let them). Only the owner manages the
  members, reads the consent periods and reads students' research: appointing a Super TA opens
  students' content, and the owner is the one accountable for it.
- A Super TA reads students' research only with a signed NDA on file for that channel; without
  it they are an ordinary TA.

A user's quota class is the highest one among the channel roles they hold anywhere
(QUOTA_CLASSES, highest first; quotas.roles); the quota settings (UEDU_DEEP_RESEARCH_QUOTA,
UEDU_CHAT_DAILY_QUOTA) are keyed by quota class and checked against this table at start-up
(quotas.apps). docs/security.md shows this table, and tests/channels_app/test_roles.py checks
that page against it."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q

# Quota classes, highest first.
QUOTA_ADMIN, QUOTA_TEACHER, QUOTA_TA, QUOTA_STUDENT = "admin", "teacher", "ta", "student"
QUOTA_CLASSES = (QUOTA_ADMIN, QUOTA_TEACHER, QUOTA_TA, QUOTA_STUDENT)

PLATFORM_ADMIN = "admin"
STAFF = "staff"
OWNER = "owner"
# The values of Membership.Role (checked when the app is ready: channels_app.apps). Plain
# strings, so this table imports no model and any layer may ask it.
TEACHER, TA, SUPER_TA, STUDENT = "teacher", "ta", "super_ta", "student"
# A Super TA membership with a signed NDA on file for the same channel: the role that reads
# students' content. (SUPER_TA alone is the membership, whatever the NDA.)
SUPER_TA_WITH_NDA = "super_ta+nda"
RESEARCHER = "researcher"

# Where a permission is held.
PLATFORM, CHANNEL, STUDY = "platform", "channel", "study"


@dataclass(frozen=True)
class Permission:
    name: str
    scope: str  # PLATFORM | CHANNEL | STUDY
    allows: str  # what it opens, for maintainers (docs/security.md shows it)


PERMISSIONS: dict[str, Permission] = {}


def _permission(name: str, scope: str, allows: str) -> str:
    PERMISSIONS[name] = Permission(name, scope, allows)
    return name


# In a channel.
CHANNEL_USE = _permission(
    "channel.use",
    CHANNEL,
    "open the channel: its chat, its materials' pages and files, its assistant (chat, Deep Research, the judge, the context check) and its catalogue documents",
)
CHANNEL_CONFIGURE = _permission(
    "channel.configure",
    CHANNEL,
    "change the channel's settings: the Deep Research switch, web tools, domains, the usage note (the settings page, the admin's channel form)",
)
MATERIALS_MANAGE = _permission(
    "materials.manage",
    CHANNEL,
    "upload, re-index and delete the channel's materials (the materials page, the admin)",
)
MEMBERS_MANAGE = _permission(
    "members.manage", CHANNEL, "add, change and remove the channel's TAs, Super TAs and students (the admin)"
)
CONSENT_READ_PERIODS = _permission(
    "consent.read_periods", CHANNEL, "read the channel's consent periods (the admin)"
)
CONSENT_CHOOSE = _permission(
    "consent.choose", CHANNEL, "withdraw one's own data from the channel's studies, or re-join them"
)
RESEARCH_READ_RECORDS = _permission(
    "research.read_records",
    CHANNEL,
    "list the channel's research tasks as operational records: who, status, cost, timing (the admin)",
)
RESEARCH_READ_RESULTS = _permission(
    "research.read_results",
    CHANNEL,
    "read students' research in the channel: questions, answers, steps, events, reports, streams and sockets",
)
RESEARCH_REVIEW = _permission(
    "research.review",
    CHANNEL,
    "review the channel's research: the review queue, reviewer notes, readers' feedback, flagging misuse",
)
CONFLICTS_DECIDE = _permission(
    "conflicts.decide", CHANNEL, "decide an unresolved conflict of a report: a side prevails, or unsettleable"
)
ANALYTICS_READ = _permission("analytics.read", CHANNEL, "open the channel's dashboard")
STUDENTS_NAMED = _permission(
    "analytics.student_names",
    CHANNEL,
    "see the students' usernames in the channel's dashboard and its CSV (who opens it without this sees a pseudonym per student)",
)

# In a study.
STUDIES_READ = _permission(
    "studies.read", STUDY, "read the study, its researchers and its export screen (the admin)"
)
EXPORT_REQUEST = _permission(
    "export.request", STUDY, "file an export request for the study, and export an approved one"
)

# On the platform.
CATALOGUE_READ_STAFF_DOCUMENTS = _permission(
    "catalogue.read_staff_documents", PLATFORM, "read the catalogue's documents for staff"
)
CHANNELS_ADMINISTER = _permission(
    "channels.administer",
    PLATFORM,
    "create and delete channels, set their name, code, slug and owner, and make or unmake a channel's teachers",
)
RESEARCH_CANCEL_ANY = _permission("research.cancel_any", PLATFORM, "cancel anyone's research")
RESEARCH_REPLAY = _permission(
    "research.replay", PLATFORM, "replay a finished research (manage.py deep_research_replay)"
)
RESEARCH_AUDIT = _permission(
    "research.audit",
    PLATFORM,
    "read every research's raw records: transcripts, claim ledgers, metrics and their dashboards",
)
RECORDS_MANAGE = _permission(
    "records.manage",
    PLATFORM,
    "add, change or delete a row the admin shows where no narrower permission names who may",
)
FAILURES_MANAGE = _permission(
    "failures.manage", PLATFORM, "the failure dataset: promote reported answers, build it, edit its cases"
)
SOURCES_MANAGE = _permission(
    "sources.manage", PLATFORM, "source statistics, their pins, and readers' source reports"
)
COSTS_MANAGE = _permission(
    "costs.manage", PLATFORM, "the platform cost dashboard, the usage ledger, cost reservations and alerts"
)
COSTS_UNSHARED = _permission(
    "costs.unshared",
    PLATFORM,
    "no per-user share of the daily cost cap, no limit on researches under way, no cancel throttle "
    "(the cap itself still applies)",
)
CHATLOG_READ = _permission("chatlog.read", PLATFORM, "read the chat log in the admin")
RETRIEVAL_INSPECT = _permission(
    "retrieval.inspect", PLATFORM, "read material chunks and term shares in the admin"
)
NOTIFICATIONS_READ = _permission(
    "notifications.read", PLATFORM, "read who asked to be e-mailed when a research finishes"
)
GOVERNANCE_MANAGE = _permission(
    "governance.manage",
    PLATFORM,
    "studies and their researchers, Super TA NDAs, consent withdrawals, the export audit",
)
EXPORTS_DECIDE = _permission(
    "exports.decide", PLATFORM, "approve or refuse export requests (the IRB delegate)"
)


@dataclass(frozen=True)
class Role:
    name: str
    held_through: str  # "superuser" | "staff" | "ownership" | "membership" | "membership+nda" | "study"
    quota_class: str | None  # None: the role gives no quota class (it is not held in a channel)
    permissions: frozenset[str]

    @property
    def reads_content(self) -> bool:
        """Reads students' research content (in its channel; everywhere for the admin)."""
        return RESEARCH_READ_RESULTS in self.permissions


_CHANNEL_MEMBER = {CHANNEL_USE, RESEARCH_READ_RECORDS}
_CONTENT_READER = {RESEARCH_READ_RESULTS, RESEARCH_REVIEW, CONFLICTS_DECIDE, ANALYTICS_READ}

ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        # Everything but a student's own consent choice (an admin is no student of a study).
        Role(PLATFORM_ADMIN, "superuser", QUOTA_ADMIN, frozenset(PERMISSIONS) - {CONSENT_CHOOSE}),
        Role(STAFF, "staff", None, frozenset({CATALOGUE_READ_STAFF_DOCUMENTS})),
        Role(
            OWNER,
            "ownership",
            QUOTA_TEACHER,
            frozenset(
                {
                    *_CHANNEL_MEMBER,
                    *_CONTENT_READER,
                    CHANNEL_CONFIGURE,
                    MATERIALS_MANAGE,
                    MEMBERS_MANAGE,
                    CONSENT_READ_PERIODS,
                    STUDENTS_NAMED,
                }
            ),
        ),
        Role(
            TEACHER,
            "membership",
            QUOTA_TEACHER,
            frozenset({*_CHANNEL_MEMBER, CHANNEL_CONFIGURE, MATERIALS_MANAGE}),
        ),
        Role(SUPER_TA_WITH_NDA, "membership+nda", QUOTA_TA, frozenset({*_CHANNEL_MEMBER, *_CONTENT_READER})),
        Role(SUPER_TA, "membership", QUOTA_TA, frozenset(_CHANNEL_MEMBER)),
        Role(TA, "membership", QUOTA_TA, frozenset(_CHANNEL_MEMBER)),
        Role(STUDENT, "membership", QUOTA_STUDENT, frozenset({CHANNEL_USE, CONSENT_CHOOSE})),
        Role(RESEARCHER, "study", None, frozenset({STUDIES_READ, EXPORT_REQUEST})),
    )
}

# Roles held in a channel (by ownership or membership).
CHANNEL_ROLES = frozenset(
    name for name, role in ROLES.items() if role.held_through in ("ownership", "membership", "membership+nda")
)
STUDY_ROLES = frozenset(name for name, role in ROLES.items() if role.held_through == "study")
# Channel roles that read the content of students' research in their channel.
CONTENT_ROLES = frozenset(name for name in CHANNEL_ROLES if ROLES[name].reads_content)
# Membership roles by the quota class they give (an NDA changes what one reads, not one's quota).
MEMBERSHIP_ROLES_BY_QUOTA = {
    quota: frozenset(
        name
        for name, role in ROLES.items()
        if role.held_through == "membership" and role.quota_class == quota
    )
    for quota in QUOTA_CLASSES
}


_ROLES_WITH = {
    permission: frozenset(name for name, role in ROLES.items() if permission in role.permissions)
    for permission in PERMISSIONS
}


def roles_with(permission: str) -> frozenset[str]:
    """The roles that grant `permission`; a name the table does not declare fails loudly."""
    try:
        return _ROLES_WITH[permission]
    except KeyError:
        raise KeyError(f"no permission {permission!r} in channels_app.roles") from None


def _check_table() -> None:
    """The table is whole, or the import fails: every quota class is given by a channel role (or
    the admin) and every such role gives one; every role grants only declared permissions, in
    the scope it is held in; every permission has a holder."""
    if {ROLES[name].quota_class for name in CHANNEL_ROLES | {PLATFORM_ADMIN}} != set(QUOTA_CLASSES):
        raise ImproperlyConfigured("every quota class is given by a role, and every channel role gives one")
    scopes = {
        "superuser": {PLATFORM, CHANNEL, STUDY},
        "staff": {PLATFORM},
        "ownership": {CHANNEL},
        "membership": {CHANNEL},
        "membership+nda": {CHANNEL},
        "study": {STUDY},
    }
    for role in ROLES.values():
        unknown = role.permissions - set(PERMISSIONS)
        if unknown:
            raise ImproperlyConfigured(f"role {role.name} grants undeclared permissions {sorted(unknown)}")
        wrong = {p for p in role.permissions if PERMISSIONS[p].scope not in scopes[role.held_through]}
        if wrong:
            raise ImproperlyConfigured(f"role {role.name} cannot hold {sorted(wrong)} where it is held")
    unheld = [name for name, holders in _ROLES_WITH.items() if not holders]
    if unheld:
        raise ImproperlyConfigured(f"permissions no role grants: {unheld}")


_check_table()


def is_platform_admin(user) -> bool:
    """The platform admin (an active superuser): the one test of it, everywhere."""
    return bool(user.is_authenticated and user.is_active and user.is_superuser)


def is_service_account(user) -> bool:
    """An account nobody can log in as (no usable password): only the platform's own processes act
    for it, within the cap and their own budgets (the evaluation's, evaluation/run.py)."""
    return bool(user is not None and user.is_authenticated and not user.has_usable_password())


def platform_admins_q(prefix: str = "") -> Q:
    """The platform admins, as a filter on users (`prefix`: the path to the user, e.g. "user__")."""
    return Q(**{f"{prefix}is_active": True, f"{prefix}is_superuser": True})


def quota_class(user, channel_roles: set[str]) -> str:
    """The highest quota class among the platform admin and the channel roles the user holds
    anywhere (`channel_roles`); the lowest class for a user who holds none."""
    if is_platform_admin(user):
        return QUOTA_ADMIN
    classes = {ROLES[name].quota_class for name in channel_roles}
    return next((quota for quota in QUOTA_CLASSES if quota in classes), QUOTA_STUDENT)


def check_membership_roles(membership_roles) -> None:
    """Every Membership.Role has its row in the table (called when the app is ready)."""
    missing = set(membership_roles) - {
        name for name, role in ROLES.items() if role.held_through == "membership"
    }
    if missing:
        raise ImproperlyConfigured(f"Membership roles without a row in channels_app.roles: {sorted(missing)}")
