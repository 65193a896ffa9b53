#!/usr/bin/env python3
"""Drives `spar serve` with accounts in a real browser (headless Chromium through Selenium),
as its people would (issue 32, "Done when"): ann and vic sign up; the admin root accepts
ann as a user and vic as an approver on the users page; ann submits a run from the index's
form and it waits (its page says so, the index shows it under "Waiting for approval", and
her own Approve is refused); vic approves it from its page; it plays to its end; the
actions log page lists each step with who took it.

Usage: serve_browser_approvals.py URL CHROMEDRIVER PASSWORD
Exit 0 when every step passed; otherwise a message and exit 1.
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import (
    NoSuchElementException, StaleElementReferenceException, WebDriverException)
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

URL, DRIVER, PASSWORD = sys.argv[1], sys.argv[2], sys.argv[3]
WORDS = "--engine name=a --engine name=b --each nodes=300 --games 4"


def step(text):
    print("serve_browser_approvals:", text, flush=True)


def browser():
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.binary_location = "/usr/bin/chromium"
    # The driver's path is given: Selenium Manager downloads nothing.
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)


def text(d, css):
    return d.find_element(By.CSS_SELECTOR, css).text


def wait(d, seconds, pred):
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(d, seconds, poll_frequency=0.2, ignored_exceptions=ignored).until(pred)


def click_and_load(d, xpath):
    """Clicks a form's button and waits for the page it leads to."""
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.XPATH, xpath).click()
    WebDriverWait(d, 60).until(lambda d: gone(old))


def gone(element):
    """Whether `element` left the document (its page was replaced). Chromium answers a look
    at a node of a page being replaced with a stale-element error, or during the swap with
    "Node with given id does not belong to the document": both mean gone."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as e:
        if "does not belong to the document" in str(e):
            return True
        raise


def fill(d, name, value):
    el = d.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def sign_up(d, name):
    d.get(URL + "/signup")
    fill(d, "name", name)
    fill(d, "password", PASSWORD)
    click_and_load(d, "//form[@action='/signup']//button")
    assert "admin has accepted" in text(d, "#done"), d.page_source


def sign_in(d, name):
    d.get(URL + "/login")
    fill(d, "name", name)
    fill(d, "password", PASSWORD)
    click_and_load(d, "//form[@action='/login']//button")
    assert not d.find_elements(By.ID, "error"), text(d, "#error")
    assert d.find_elements(By.LINK_TEXT, name), f"{name} is not signed in"


def sign_out(d):
    d.get(URL + "/")
    click_and_load(d, "//form[@action='/logout']/button")


def accept(d, name, role):
    d.get(URL + "/users")
    row = f"//tr[@id='user-{name}']"
    Select(d.find_element(By.XPATH, f"{row}//select[@name='role']")).select_by_visible_text(role)
    click_and_load(d, f"{row}//form[contains(@action,'/accept')]/button")
    cells = d.find_element(By.ID, f"user-{name}").text
    assert "active" in cells and role in cells, cells


def main():
    d = browser()
    try:
        d.set_page_load_timeout(120)
        for name in ("ann", "vic"):
            sign_up(d, name)
        step("ann and vic signed up")

        sign_in(d, "root")
        accept(d, "ann", "user")
        accept(d, "vic", "approver")
        sign_out(d)
        step("root accepted ann as a user and vic as an approver")

        sign_in(d, "ann")
        Select(d.find_element(By.NAME, "kind")).select_by_visible_text("match")
        fill(d, "words", WORDS)
        fill(d, "note", "browser approval")
        click_and_load(d, "//form[@action='/runs']//button[@type='submit']")
        assert "/runs/" in d.current_url, d.current_url
        rid = int(d.current_url.rstrip("/").rsplit("/", 1)[1])
        assert text(d, "td[data-f=state]") == "pending-approval", text(d, "td[data-f=state]")
        assert "waits for an approver" in text(d, "#waits")
        d.get(URL + "/")
        group = d.find_element(By.XPATH, "//section[@id='waiting']//table")
        assert group.find_elements(By.ID, f"run-{rid}"), "the run is not in the waiting group"
        d.get(URL + f"/runs/{rid}")
        click_and_load(d, "//form[contains(@action,'/approve')]/button")
        assert "only an approver or an admin" in text(d, "#error"), d.page_source
        d.get(URL + f"/runs/{rid}")
        assert text(d, "td[data-f=state]") == "pending-approval", "the run started unapproved"
        sign_out(d)
        step(f"ann's run {rid} waits; her own approval was refused")

        sign_in(d, "vic")
        d.get(URL + f"/runs/{rid}")
        click_and_load(d, "//form[contains(@action,'/approve')]/button")
        assert text(d, "#approved").startswith("by vic on "), text(d, "#approved")
        step(f"vic approved run {rid}")
        wait(d, 240, lambda d: text(d, "td[data-f=state]") in ("finished", "failed"))
        assert text(d, "td[data-f=state]") == "finished", text(d, "td[data-f=state]")
        step(f"run {rid} played to its end")

        d.find_element(By.LINK_TEXT, "actions").click()
        rows = [
            (r.find_element(By.CSS_SELECTOR, ".who").text,
             r.find_element(By.CSS_SELECTOR, ".action").text,
             r.find_element(By.CSS_SELECTOR, ".target").text)
            for r in d.find_elements(By.CSS_SELECTOR, "#actions tr[class^=act-]")
        ]
        rows.reverse()
        expected = [
            ("ann", "signup", "user ann"),
            ("vic", "signup", "user vic"),
            ("root", "accept", "user ann"),
            ("root", "accept", "user vic"),
            ("ann", "submit", f"run {rid}"),
            ("vic", "approve", f"run {rid}"),
        ]
        assert rows == expected, f"the actions log: {rows}"
        # Filtered in the URL: vic's actions only.
        fill(d, "user", "vic")
        click_and_load(d, "//form[@action='/actions']//button")
        assert "user=vic" in d.current_url, d.current_url
        whos = {r.text for r in d.find_elements(By.CSS_SELECTOR, "#actions td.who")}
        assert whos == {"vic"}, whos
        step("the actions log shows each step")
        step("all steps passed")
    finally:
        d.quit()


if __name__ == "__main__":
    main()
