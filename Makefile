# The two commands of the README: `make run` and `make test`. Both create the virtualenv first.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: run test stop messages eval eval-smoke

# Rebuilt when a requirements file changes; an existing virtualenv (or a symlink to one) is reused.
# `make run` installs the runtime only (requirements.txt); `make test` adds the development tools
# (requirements-dev.txt: pytest, Playwright, schemathesis, import-linter …).
$(VENV)/bin/python:
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV) && $(VENV)/bin/pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt | $(VENV)/bin/python
	$(VENV)/bin/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(VENV)/bin/python
	$(VENV)/bin/pip install --quiet -r requirements-dev.txt
	touch $(VENV)/.installed $@

# The launcher runs the dev settings unless DJANGO_SETTINGS_MODULE says otherwise (importing the
# uedu_dr package would otherwise default it to production, as the deployable entry points do).
run: $(VENV)/.installed
	DJANGO_SETTINGS_MODULE=$${DJANGO_SETTINGS_MODULE:-uedu_dr.settings.dev} $(PY) -m uedu_dr.launcher

# The embedded servers a test run had to start are stopped again afterwards (a stack that
# `make run` is using stays up).
test: $(VENV)/.installed-dev
	@$(VENV)/bin/ruff check --quiet . && $(VENV)/bin/ruff format --check --quiet . && echo 'ruff: lint and format clean'
	@was=$$($(PY) -m uedu_dr.devstack status); \
	$(VENV)/bin/lint-imports --no-cache > /tmp/uedu-lint-imports.log 2>&1 || { cat /tmp/uedu-lint-imports.log; exit 1; }; echo 'lint-imports: the layer contracts are kept'; \
	$(PY) manage.py compilemessages -v 0 --ignore $(VENV) && $(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ "$$was" != "up" ] && [ -z "$$DATABASE_URL" ]; then $(PY) -m uedu_dr.devstack stop >/dev/null; fi; \
	exit $$rc

stop: $(VENV)/.installed
	$(PY) -m uedu_dr.devstack stop

messages: $(VENV)/.installed
	$(PY) manage.py makemessages -l zh_Hant -l en --ignore $(VENV) --ignore tests --ignore bench
	$(PY) manage.py makemessages -d djangojs -l zh_Hant -l en --ignore $(VENV) --ignore tests --ignore bench --ignore staticfiles

# A real model's evaluation (docs/evaluation.md): `make eval MODEL=<researcher> JUDGE=<judge model>`
# checks the model, the judge, the daily cap and the embedding backend, prints the estimated calls,
# tokens and cost, measures the judge against the labelled pairs, then runs the whole dataset with
# k=3 into a dated results folder. SMOKE=1 (or `make eval-smoke`): the fixed 12-item subset, k=1.
# DATASET: a dataset name or file (default: the command's, dataset v3; a results folder resumes and
# replays with the dataset its manifest names). JUDGE_URL / JUDGE_KEY: the judge's server when it is
# not the researcher's; EVAL_ARGS: anything else. tests/evaluation/test_make_eval.py runs this line.
eval: $(VENV)/.installed
	@test -n "$(MODEL)" || { echo "make eval MODEL=<researcher model> JUDGE=<judge model> [SMOKE=1]"; exit 2; }
	@test -n "$(JUDGE)" || { echo "make eval needs JUDGE=<judge model> (another model than MODEL)"; exit 2; }
	DJANGO_SETTINGS_MODULE=$${DJANGO_SETTINGS_MODULE:-uedu_dr.settings.dev} $(PY) manage.py deep_research_eval \
		$(if $(DATASET),"$(DATASET)") --preflight --model "$(MODEL)" --judge-model "$(JUDGE)" \
		$(if $(JUDGE_URL),--judge-base-url "$(JUDGE_URL)") $(if $(JUDGE_KEY),--judge-api-key "$(JUDGE_KEY)") \
		$(if $(SMOKE),--smoke) $(EVAL_ARGS)

eval-smoke:
	@$(MAKE) --no-print-directory eval SMOKE=1
