"""The household dashboard in a real browser: headless Chromium (Debian's
chromium) loads / from a running server while members are using it, the
test checks the rendered members, queues, running sequences and CPU job
queues in the DOM, and writes a screenshot (dashboard.png in the output
folder). The page needs a key (Basic authentication, the key as the
password): the admin's shows everyone, a member's only itself."""

import os
import re
import shutil
import subprocess
import sys
import threading
import time

from serve_harness import ADMIN_KEY, KEYS, Checks, Server, chat_body, server_binary, wait_for

checks = Checks("serve/dashboard")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(browser, url, *extra):
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", "--window-size=1400,900",
            "--virtual-time-budget=4000", *extra, url]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def main():
    binary = server_binary()
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "."
    browser = chromium()
    if not checks.check(browser is not None, "chromium is installed (cmake/scripts/setup_debian.sh)"):
        return checks.finish()
    with Server(binary, "--n_seq_max=4") as s:
        # Keep the house busy while the page loads: long answers running,
        # more waiting behind them.
        stop = threading.Event()

        def member(name, cls=None):
            headers = {"X-Hearth-Class": cls} if cls else None
            while not stop.is_set():
                r = s.stream("/v1/chat/completions", chat_body(max_tokens=3000), key=KEYS[name],
                             headers=headers, on_event=lambda e, c: not stop.is_set())
                if r["status"] != 200:
                    # Refused (a member over its quota): wait as a client
                    # should, instead of retrying in a tight loop.
                    stop.wait(0.2)
        threads = [threading.Thread(target=member, args=(n,)) for n in ("ana", "ben", "cleo", "dan", "ana", "dan")]
        for t in threads:
            t.start()
        wait_for(lambda: s.status()["kv"]["used_blocks"] > 0 and
                 sum(c["waiting"] for c in s.status()["classes"]) > 0)
        url = "http://admin:%s@127.0.0.1:%d/" % (ADMIN_KEY, s.port)
        dom = browse(browser, url, "--dump-dom")
        html = dom.stdout
        checks.check(dom.returncode == 0 and "<table" in html, "chromium rendered the page")
        for name in ("ana", "ben", "cleo", "dan", "eve"):
            checks.check('data-member="%s"' % name in html, "member %s is listed" % name)
        for cls in ("voice", "chat", "agent", "documents", "embedding", "maintenance"):
            checks.check('data-class="%s"' % cls in html, "queue of class %s is shown" % cls)
        for queue in ("interactive", "documents", "library", "model_load"):
            checks.check('data-queue="%s"' % queue in html, "job queue %s is shown" % queue)
        # The model load ran on its queue: one done, in the row's "done" cell.
        checks.check(re.search(r'data-queue="model_load">(?:<td[^>]*>[^<]*</td>){6}<td class="num">1</td>', html)
                     is not None, "the model_load queue shows its one load done")
        checks.check(re.search(r'<b id="pressure">\d+%</b>', html) is not None,
                     "the interactive pressure is shown")
        checks.check('<b id="policy">household</b>' in html and '<b id="model">tiny</b>' in html,
                     "model and policy filled in from the status endpoint")
        running_rows = html.count("<td>ana</td>") + html.count("<td>dan</td>") + html.count("<td>ben</td>")
        checks.check(running_rows > 0, "running sequences are listed with their members")
        checks.check('id="kv-bar" style="width: 0%' not in html, "the KV bar shows use")
        # A member's key: the household's queues, and only its own row and
        # its own running requests.
        own = browse(browser, "http://ana:%s@127.0.0.1:%d/" % (KEYS["ana"], s.port), "--dump-dom").stdout
        checks.check('data-member="ana"' in own and '<b id="model">tiny</b>' in own and
                     'data-class="voice"' in own, "ana's key renders the page with the queues")
        checks.check(not any('data-member="%s"' % n in own or "<td>%s</td>" % n in own
                             for n in ("ben", "cleo", "dan", "eve")),
                     "ana's page shows no other member nor their running requests")
        shot = os.path.join(out_dir, "dashboard.png")
        if os.path.exists(shot):
            os.remove(shot)
        browse(browser, url, "--screenshot=" + shot)
        checks.check(os.path.exists(shot) and os.path.getsize(shot) > 10000,
                     "screenshot written to %s" % shot)
        stop.set()
        for t in threads:
            t.join()
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
