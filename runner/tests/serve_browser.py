#!/usr/bin/env python3
"""Drives `spar serve` in a real browser (headless Chromium through Selenium), as a user:
opens the index, registers an engine from the engines page, submits an SPRT of two option
sets of the embedded engine from the index's form, watches the run page reach its verdict
without reloading (the page's polling script updates it), finds the run by search, and
stops and resumes a second run (of the registered engine at two revisions, whose page shows
the commits and the diff).

Usage: serve_browser.py URL REPO CHROMEDRIVER
Exit 0 when every step passed; otherwise a message and exit 1.
"""
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

URL, REPO, DRIVER = sys.argv[1], sys.argv[2], sys.argv[3]


def step(text):
    print("serve_browser:", text, flush=True)


def browser():
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.binary_location = "/usr/bin/chromium"
    # The driver's path is given: Selenium Manager downloads nothing.
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)


def text(d, css):
    return d.find_element(By.CSS_SELECTOR, css).text


def wait(d, seconds, pred, poll=0.2):
    """Waits for `pred`, across the page changes a form's POST and redirect make."""
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(d, seconds, poll_frequency=poll, ignored_exceptions=ignored).until(pred)


def click_and_load(d, xpath):
    """Clicks a form's button and waits for the page it leads to."""
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.XPATH, xpath).click()
    WebDriverWait(d, 60).until(EC.staleness_of(old))


def fill(d, name, value):
    el = d.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def submit_run(d, words, note):
    d.get(URL + "/")
    Select(d.find_element(By.NAME, "kind")).select_by_visible_text("sprt" if "--elo0" in words else "match")
    fill(d, "words", words)
    fill(d, "note", note)
    d.find_element(By.CSS_SELECTOR, "form[action='/runs'] button[type=submit]").click()
    wait(d, 120, lambda d: "/runs/" in d.current_url or d.find_elements(By.ID, "error"))
    if d.find_elements(By.ID, "error"):
        raise SystemExit("the run was refused: " + text(d, "#error"))
    return int(d.current_url.rstrip("/").rsplit("/", 1)[1])


def main():
    d = browser()
    try:
        d.set_page_load_timeout(120)
        d.get(URL + "/")
        assert "Runs" in d.title, d.title
        assert d.find_element(By.NAME, "words"), "no new-run form on the index"
        step("the index is open")

        # Register the tiny engine from the engines page.
        d.find_element(By.LINK_TEXT, "engines").click()
        fill(d, "name", "tiny")
        fill(d, "repo", REPO)
        Select(d.find_element(By.NAME, "build")).select_by_value("make")
        d.find_element(By.CSS_SELECTOR, "form[action='/engines'] button").click()
        wait(d, 30, lambda d: d.find_elements(By.ID, "engine-tiny"))
        step("engine tiny registered")

        # An SPRT of two option sets of the embedded engine: the net against hce.
        sprt = ("--engine name=net --engine name=hce option.Eval=hce "
                "--each nodes=1500 --elo0 0 --elo1 20")
        rid = submit_run(d, sprt, "browser net-vs-hce")
        row = d.find_element(By.ID, "run")
        first = row.get_attribute("data-state")
        step(f"run {rid} submitted; its page shows it {first}")
        # A mark on the page: a reload would lose it.
        d.execute_script("window.__notReloaded = 42;")
        wait(d, 300, 
            lambda d: text(d, "td[data-f=verdict]") in ("H1", "H0"))
        verdict = text(d, "td[data-f=verdict]")
        state = wait(d, 60, 
            lambda d: text(d, "td[data-f=state]") in ("finished", "failed") and text(d, "td[data-f=state]"))
        assert state == "finished", state
        assert d.execute_script("return window.__notReloaded;") == 42, "the page was reloaded"
        assert first in ("queued", "running"), \
            f"the run was {first} when its page loaded: the live update was not seen"
        events = int(row.get_attribute("data-events") or 0)
        assert events >= 1, "the page got no event of the run's live stream (SSE)"
        step(f"run {rid} reached {verdict} ({text(d, 'td[data-f=llr]')}) without a reload "
             f"({events} live stream events)")
        assert verdict == "H1", verdict

        # The index updates live: the same SPRT again, watched from the index (its stream,
        # /api/events/runs): the row gets its numbers, turns green and moves to Finished.
        rid2 = submit_run(d, sprt, "browser index live")
        d.get(URL + "/")
        d.execute_script("window.__notReloaded = 43;")
        wait(d, 300, lambda d: d.find_elements(
            By.CSS_SELECTOR, f"section#finished tr#run-{rid2}.H1"))
        row2 = d.find_element(By.ID, f"run-{rid2}")
        assert d.execute_script("return window.__notReloaded;") == 43, "the index was reloaded"
        events2 = int(row2.get_attribute("data-events") or 0)
        assert events2 >= 1, "the index got no event of its live stream (SSE)"
        assert row2.find_element(By.CSS_SELECTOR, "td[data-f=state]").text == "finished"
        step(f"run {rid2} turned H1 and moved to Finished on the index without a reload "
             f"({events2} index stream events)")

        # Find it by search (the form: text in the note).
        d.find_element(By.LINK_TEXT, "search").click()
        fill(d, "q", "net-vs-hce")
        Select(d.find_element(By.NAME, "kind")).select_by_visible_text("sprt")
        d.find_element(By.CSS_SELECTOR, "form[action='/search'] button").click()
        wait(d, 30, lambda d: "q=net-vs-hce" in d.current_url)
        assert d.find_elements(By.ID, f"run-{rid}"), "the run is not in the search"
        found = d.current_url
        step(f"found by search: {found}")

        # A second run: the registered engine at two revisions; stop it and resume it.
        long = ("--engine name=dev engine=tiny rev=main bench=2000 "
                "--engine name=base engine=tiny rev=base bench=1000 "
                "--each nodes=3000 --games 4000")
        rid2 = submit_run(d, long, "browser stop-resume")
        assert "a faster search" in text(d, "#log"), "no commit list on the run page"
        assert "search.c" in text(d, "#diffstat"), "no diff on the run page"
        step(f"run {rid2}: the page shows the commits and the diff")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "running")
        click_and_load(d, "//form[contains(@action,'/stop')]/button")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "stopped")
        step(f"run {rid2} stopped")
        click_and_load(d, "//form[contains(@action,'/resume')]/button")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") in ("queued", "running"))
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "running")
        step(f"run {rid2} resumed")
        click_and_load(d, "//form[contains(@action,'/stop')]/button")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "stopped")
        step("all steps passed")
    finally:
        d.quit()


if __name__ == "__main__":
    main()
