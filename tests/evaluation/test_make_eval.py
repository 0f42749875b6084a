"""`make eval MODEL=… JUDGE=… SMOKE=1` as an operator types it: the Makefile's own line in a real
`make` process (not `make -n`, not call_command), against the scripted model and a scripted judge
served over HTTP, on the test database.

`-o .venv/.installed` only tells make that the virtualenv this test runs in is installed (a
worktree's requirements file may be newer than it); the recipe runs as written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation import dataset as datasets
from evaluation import run as evaluation_run
from tests.support import eval_judge
from tests.support.eval_judge import read_results
from tests.support.eval_model import install
from tests.support.scripted_llm import Scenario
from tests.support.stack import ROOT, child_env

pytestmark = pytest.mark.slow


def test_make_eval_smoke_runs_the_v3_smoke_subset_as_written(
    transactional_db, llm, fake_embeddings, tmp_path
):
    llm.reset(Scenario())
    llm.served = ["scripted-faithful", "judge-x"]
    install(llm, datasets.load("uedu_eval_v3.jsonl"), seed=7)
    eval_judge.install(llm, "labels")
    out = tmp_path / "results"
    env = child_env(
        OPENAI_BASE_URL=llm.url,
        UEDU_LLM_MAX_RETRIES=2,
        UEDU_LLM_TIMEOUT_SECONDS=10,
        UEDU_EMBEDDING_BACKEND="openai",
        UEDU_EMBEDDING_MODEL="fake-embedding-32",
        UEDU_EMBEDDING_DIMENSIONS=32,
        UEDU_EMBEDDING_BASE_URL=fake_embeddings.base_url,
        UEDU_EMBEDDING_API_KEY="sk-test-embeddings",
        UEDU_EVAL_RESULTS_DIR=str(out),
    )
    venv = Path(sys.executable).parent.parent
    done = subprocess.run(
        ["make", "--no-print-directory", "-o", f"{venv}/.installed", f"VENV={venv}",
         "eval", "MODEL=scripted-faithful", "JUDGE=judge-x", "SMOKE=1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]

    # The preflight ran (model and judge listed, the cap, the embeddings) and the judge was measured.
    for line in ("estimate: 12 items × k=1", "researcher: scripted-faithful listed", "judge: judge-x listed"):
        assert line in output, line
    assert "embeddings: openai backend answers (32 dimensions)" in output and "passed" in output

    results = read_results(out)
    manifest = results["manifest"]
    smoke = json.loads(evaluation_run.SMOKE_FILE.read_text())["uedu_eval_v3.jsonl"]
    assert manifest["dataset"]["path"] == "uedu_eval_v3.jsonl" == datasets.DEFAULT
    assert sorted(manifest["dataset"]["items"]) == sorted(smoke) and manifest["k"] == 1
    assert manifest["flags"]["smoke"] is True and manifest["judge"]["model"] == "judge-x"
    assert [row["status"] for row in results["items"]] == ["done"] * 12
    assert results["summary"]["runs"] == 12 and results["summary"]["completed_runs"] == 12
    assert f"results written to {results['folder']}" in output
    # Every summary prints each recall beside a precision (overall and per category).
    for scope in ("all items", "course", "catalogue", "analyst"):
        line = next(line for line in output.splitlines() if line.startswith(f"  {scope}: cit.recall"))
        assert "/ cit.prec" in line and "fact.recall" in line and "/ claim.prec" in line, line
