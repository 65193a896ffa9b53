#!/usr/bin/env python3
"""Checks a watched branch's progression page in a real browser (headless Chromium through
Selenium; issue 55, "Done when"): from the engines page to the progression of engine
`tiny`, whose four commits were tested; the chart has its line and a point per commit, each
linking to its run; the weakening commit's point is marked failed; with a bisect, the
commit it found is marked with a link to it, in the chart and in the table; the search box
keeps the weakening commit's row alone.

Usage: serve_browser_watch.py URL CHROMEDRIVER WEAK_SHA [BISECT_RUN_ID]
Exit 0 when every step passed; otherwise a message and exit 1.
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

URL, DRIVER, WEAK = sys.argv[1], sys.argv[2], sys.argv[3]
BISECT = sys.argv[4] if len(sys.argv) > 4 else ""


def step(text):
    print("serve_browser_watch:", text, flush=True)


def check(ok, what):
    if not ok:
        raise AssertionError(what)


def main():
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.binary_location = "/usr/bin/chromium"
    d = webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)
    try:
        d.get(URL + "/engines")
        d.find_element(By.CSS_SELECTOR, "#engine-tiny a[href='/engines/tiny/progression']").click()
        check(d.current_url.endswith("/engines/tiny/progression"), d.current_url)
        step("the engines page links the progression")
        line = d.find_element(By.CSS_SELECTOR, "svg#progression-chart polyline#progression-line")
        check(line.is_displayed() and len(line.get_attribute("points").split()) == 5,
              "the line: " + line.get_attribute("points"))
        points = d.find_elements(By.CSS_SELECTOR, "svg#progression-chart a circle.point")
        check(len(points) == 4, "%d points" % len(points))
        for p in points:
            # An SVG link's href is an animated string: its attribute as written.
            href = p.find_element(By.XPATH, "..").get_dom_attribute("href")
            check(href.startswith("/runs/"), "a point links to " + str(href))
        failed = d.find_elements(By.CSS_SELECTOR, "circle.point.failed")
        check([f.get_attribute("data-sha") for f in failed] == [WEAK],
              "failed points: %s" % [f.get_attribute("data-sha") for f in failed])
        step("the line, its four points linked to their runs, the weakening one failed")
        if BISECT:
            mark = d.find_element(By.CSS_SELECTOR, "text.found[data-sha='%s']" % WEAK)
            href = mark.find_element(By.XPATH, "..").get_dom_attribute("href")
            check(href == "/runs/" + BISECT, "the mark links to " + str(href))
            row = d.find_element(By.ID, "commit-" + WEAK)
            link = row.find_element(By.CSS_SELECTOR, "a.found")
            check(link.get_attribute("href").endswith("/runs/" + BISECT), link.get_attribute("href"))
            step("the bisect's find is marked at the weakening commit, linked to the bisect")
        box = d.find_element(By.CSS_SELECTOR, "input[name='q']")
        box.send_keys("simpler")
        box.submit()
        rows = d.find_elements(By.CSS_SELECTOR, "#commits tr[id^='commit-']")
        check([r.get_attribute("id") for r in rows] == ["commit-" + WEAK],
              "the search kept %s" % [r.get_attribute("id") for r in rows])
        step("the search keeps the weakening commit alone")
    finally:
        d.quit()
    print("serve_browser_watch: all steps passed")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - any failure is the test's
        print("serve_browser_watch: FAILED:", repr(e))
        sys.exit(1)
