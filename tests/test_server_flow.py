"""Training together on one machine: a server, two ``zero9 client`` processes and ``zero9 trainer``.

Candidates are gated by SPRT over match games the clients play; the best net changes; the
status page, opened in real headless Chromium, shows the best net and draws the Elo graph.
``--elo1 400`` makes SPRT decide within a handful of games (the server's default is Leela
Zero's 35, which needs hundreds). Besides the trainer's candidate, the shipped 9x9 net is
submitted through the same API-key endpoint: against a random 1-block net it must pass, so the
best net changes for certain.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import default_ctrl_c

pytest.importorskip("fastapi", reason="the server extra: pip install '.[server]'")

from zero9.distributed.client import http, multipart  # noqa: E402
from zero9.distributed.local import LocalServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "example-data" / "go_9x9_best.txt.gz"
SERVER_ARGS = ("--blocks", "1", "--filters", "8", "--visits", "2", "--rate-limit", "0", "--elo1", "400",
               "--match-in-flight", "4", "--min-moves", "0",
               "--resign-pct", "0")
# faulthandler on: a client that does not answer Ctrl-C is sent SIGABRT and logs where it sat
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONFAULTHANDLER": "1"}
FLOW_SECONDS = 480

pytestmark = pytest.mark.timeout(900)


def submit_network(url: str, api_key: str, gz: bytes) -> bytes:
    body, content_type = multipart({"training_steps": "0"}, {"weights": gz})
    return http(f"{url}/submit-network", body, {"Content-Type": content_type, "X-Api-Key": api_key})


def zero9(*args: str, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen([sys.executable, "-m", "zero9", *args], stdout=out, stderr=subprocess.STDOUT,
                                env=ENV, preexec_fn=default_ctrl_c)


def check_page_in_chromium(url: str, best: str, screenshot: Path) -> None:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (the test extra)")
    from selenium.webdriver.common.by import By

    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.fail("chromium and chromedriver are needed (scripts/test.sh installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,1200"):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.get(url)
        assert driver.find_element(By.ID, "best-network").text == best
        graph = driver.find_element(By.ID, "elo-graph")
        assert graph.size["width"] > 100 and graph.size["height"] > 100
        line = graph.find_element(By.TAG_NAME, "polyline")
        assert len(line.get_attribute("points").split()) >= 2  # at least two rated nets, joined
        assert line.size["width"] > 0  # drawn, not just present
        assert "PASS" in driver.find_element(By.ID, "matches").text
        driver.save_screenshot(str(screenshot))
    finally:
        driver.quit()


def test_two_clients_and_a_trainer_gate_and_promote(tmp_path):
    run_dir = tmp_path / "run"
    with LocalServer(run_dir, *SERVER_ARGS) as server:
        start = server.status()["best_network"]
        api_key = (run_dir / "api_key").read_text().strip()
        submit_network(server.url, api_key, SHIPPED.read_bytes())
        urls = [server.client_url(f"student{i}") for i in range(2)]
        clients = [zero9("client", urls[i], "--cache", str(tmp_path / f"cache{i}"), "--device", "cpu",
                         "-g", "2", log=tmp_path / f"client{i}.log") for i in range(2)]
        trainer = zero9("trainer", server.url, str(run_dir), "--steps", "20", "--batch-size", "32",
                        "--min-games", "4", "--rounds", "1", "--device", "cpu", log=tmp_path / "trainer.log")
        try:
            deadline = time.monotonic() + FLOW_SECONDS
            while time.monotonic() < deadline:
                status = server.status()
                decided = [m for m in status["matches"] if m["decision"]]
                if len(decided) >= 2 and trainer.poll() is not None:
                    break
                time.sleep(2)
            status = server.status()
            assert trainer.wait(60) == 0, (tmp_path / "trainer.log").read_text()[-2000:]
            assert len(status["matches"]) == 2, status["matches"]  # the shipped net and the trainer's
            assert all(m["decision"] in ("H1", "H0") for m in status["matches"]), status["matches"]
            assert status["best_network"] != start
            assert status["games"] >= 4 and status["match_games"] >= 5
            promoted = next(n for n in status["network_list"] if n["hash"] == status["best_network"])
            assert promoted["elo"][0] > 0  # above the random start net
            check_page_in_chromium(server.url + "/", status["best_network"], tmp_path / "status.png")
        finally:
            for process in clients:
                process.send_signal(signal.SIGINT)
            for process in clients:
                try:
                    process.wait(120)
                except subprocess.TimeoutExpired:
                    process.send_signal(signal.SIGABRT)  # its stacks into its log, then it ends
                    process.wait(60)
            if trainer.poll() is None:
                trainer.kill()
        for i, process in enumerate(clients):
            assert process.returncode == 130, (tmp_path / f"client{i}.log").read_text()[-2000:]
