import pytest


@pytest.fixture(autouse=True)
def _results_folders_in_tmp(settings, tmp_path):
    """A run without --out writes its results folder under UEDU_EVAL_RESULTS_DIR: a test's own."""
    settings.UEDU_EVAL_RESULTS_DIR = str(tmp_path / "eval-results")
