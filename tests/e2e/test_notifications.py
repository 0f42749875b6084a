"""A research ends while the student is elsewhere: the browser's notification when the chat page
sits in another tab (and none while the student looks at it), and the e-mail with the link to the
result when the student turned it on in their notification settings."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from research.models import ResearchTask
from tests.conftest import sent_mail
from tests.e2e.test_chat_page import COMPLEX, chat, hold
from tests.support.stack import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# The browser's Notification, recording what the page shows (the OS's notification centre is
# beyond the test's reach) and when it asks for the permission. Headless chromium answers
# "denied" before anyone asked; a fresh profile answers "default", and so does this double until
# the page asks (the test then grants it as the student would). An init script: the page's own
# CSP does not apply to it. Headless chromium keeps every tab "visible", so the test says when
# the student is away (window.away), as switching tabs would.
RECORD_NOTIFICATIONS = """
(() => {
  const realHidden = Object.getOwnPropertyDescriptor(Document.prototype, "hidden").get;
  Object.defineProperty(Document.prototype, "hidden", { get() { return window.away === undefined ? realHidden.call(this) : window.away; } });
  const Real = window.Notification;
  let asked = false;
  window.shownNotifications = [];
  window.permissionRequests = [];  // whether each came during a user gesture
  window.Notification = class extends Real {
    constructor(title, options) { super(title, options); window.shownNotifications.push({title, body: (options || {}).body || ""}); }
    static get permission() { return asked || Real.permission === "granted" ? Real.permission : "default"; }
    static requestPermission() {
      asked = true;
      window.permissionRequests.push(navigator.userActivation.isActive);
      return Promise.resolve(Real.permission);
    }
  };
})();
"""


def research(page, personas, question: str = COMPLEX) -> None:
    chat(page, personas)
    page.click("#dr-toggle")
    page.fill("#message", question)
    page.click("#send")
    expect(page.locator(".dr-card")).to_have_count(1)


def test_the_student_in_another_tab_is_notified_and_mailed_when_the_research_ends(
    open_as, personas, llm, live
):
    page = open_as(personas.student)
    page.add_init_script(RECORD_NOTIFICATIONS)

    # The e-mail is off until the student turns it on.
    page.get_by_role("link", name="我的研究").click()
    page.get_by_role("link", name="通知").click()
    box = page.get_by_label("研究完成時寄電子郵件給我")
    expect(box).not_to_be_checked()
    expect(page.locator("main")).to_contain_text("s_alice@example.test")
    box.check()
    page.get_by_role("button", name="儲存").click()
    expect(page.locator(".messages")).to_contain_text("通知設定已儲存。")
    expect(page.get_by_label("研究完成時寄電子郵件給我")).to_be_checked()

    # Starting a research is the click on which the page asks for the permission.
    release = hold(llm, "action")
    research(page, personas)
    assert page.evaluate("window.permissionRequests") == [True]  # once, on the click
    page.context.grant_permissions(["notifications"], origin=live.extra["url"])  # the student allows it

    elsewhere = page.context.new_page()
    elsewhere.goto("/deep_research/my")
    elsewhere.bring_to_front()
    page.evaluate("window.away = true")
    release.set()
    page.wait_for_function("() => window.shownNotifications.length > 0", timeout=120_000)  # the research ends
    assert page.evaluate("window.shownNotifications") == [{"title": "你的深度研究已完成", "body": COMPLEX}]
    task = ResearchTask.objects.get(user=personas.student)
    expect(page.locator(f'.dr-answer[data-task="{task.task_uuid}"]')).to_be_attached()

    # The e-mail links to the result page, which opens on the answer.
    [message] = wait_for(lambda: sent_mail(str(task.task_uuid)), message="the e-mail")
    link = re.search(r"https?://\S+", message.get_payload(decode=True).decode("utf-8")).group(0)
    elsewhere.goto(urlsplit(link).path)
    expect(elsewhere.locator(f'.dr-answer[data-task="{task.task_uuid}"]')).to_be_visible()

    # Watching the page, the student needs no notification: the answer appears in front of them.
    page.bring_to_front()
    # Held like the first, so that its progress card is there to be seen: an unheld research can
    # end, and its card turn into the answer, before the check below looks.
    release = hold(llm, "action")
    research(page, personas, "布魯姆分類法的六個層次如何對應課程目標？")  # a fresh chat page, in front
    release.set()
    expect(page.locator(".dr-answer")).to_have_count(2, timeout=120_000)
    assert page.evaluate("window.shownNotifications") == []
