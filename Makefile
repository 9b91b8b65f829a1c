# The compendium's task runner. Each target installs what it needs into .venv first, so on a fresh
# machine with Python 3.11 the two README commands are all there is:
#   make results   # run every notebook on the embedded data into results/
#   make test      # unit, golden and calibration tests + every notebook under nbval (small parameters)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml requirements/constraints.txt jupyter/*/*.json jupyter/*/*/*/*.json | cksum | cut -d' ' -f1)

.PHONY: setup results reproduce test test-slow bench clean-venv site browser-test class

$(STAMP): pyproject.toml requirements/constraints.txt $(wildcard jupyter/*/*.json jupyter/*/*/*/*.json)
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), f"Python 3.11 needed, this is {sys.version.split()[0]}"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e ".[notebooks,dist,test,site]"
	$(BIN)/python -m ipykernel install --sys-prefix --name metaeval --display-name "Python (metaeval)" >/dev/null
	# JupyterLab: double-click opens notebooks/*.py as notebooks; saves keep a source's parameters cell (jupyter/README.md)
	mkdir -p $(VENV)/share/jupyter/lab/settings/overrides.d $(VENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter/lab/settings/overrides.d/metaeval.json $(VENV)/share/jupyter/lab/settings/overrides.d/
	cp jupyter/jupyter_server_config.d/metaeval.json $(VENV)/etc/jupyter/jupyter_server_config.d/
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

setup: $(STAMP)

# What ran is recorded in .cache/runs/ (this checkout only): a fresh clone runs all 25 runs, a second `make results`
# skips what is unchanged; both end with the reproduction report against the committed files (git HEAD).
results: setup
	$(BIN)/metaeval run-all --jobs 2 --log .cache/run-all.log --report

# Rerun everything, whatever this machine ran before, and compare every output with the committed file.
reproduce: setup
	$(BIN)/metaeval run-all --jobs 2 --log .cache/run-all.log --force --report

# Every notebook at the class preset (notebooks/class_parameters.yml) into results/runs/class/, with measured times.
class: setup
	$(BIN)/metaeval class

# Every notebook figure is checked for text cut off, text over text and legends over data as nbval draws it
# (metaeval.studies.plotting.layout_problems): FIGURE_CHECK=raise makes a figure with such a problem fail its cell.
FIGURE_CHECK ?= raise

test: setup
	$(BIN)/ruff check lib tests notebooks site
	rm -rf .nbval && $(BIN)/metaeval prepare-ci .nbval
	METAEVAL_FIGURE_CHECK=$(FIGURE_CHECK) $(BIN)/python -m pytest -q -m "not slow" tests lib/metaeval .nbval --nbval-lax --nbval-current-env -p no:cacheprovider
	$(BIN)/mypy

test-slow: setup
	$(BIN)/python -m pytest -q -m slow tests

# One markdown report, printed and saved as benchmarks/REPORT.md. report.py measures ROUGE, the statistics
# and the power study against their anchors, and runs and quotes every other benchmarks/bench_*.py (a new
# benchmark only needs to be a script there).
bench: setup
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt -e ".[bench]"
	$(BIN)/python benchmarks/report.py

# The static site (site/_build/html/index.html) from the committed results (the files git tracks under results/):
# Sphinx + myst-nb, nothing re-executed. `make site SITE_OPTS=--user-runs` adds your own finished runs, apart.
SITE_OPTS ?=
site: setup
	$(BIN)/python site/build.py $(SITE_OPTS)

# The site in headless Chromium (Debian's chromium + chromium-driver, installed here when run as root): every page
# loads without console errors, every internal link resolves, every figure renders, the report card is one page.
browser-test: site
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium chromium-driver; \
	  else echo "browser-test needs chromium and chromium-driver: sudo apt-get install chromium chromium-driver"; exit 1; fi; fi
	METAEVAL_SITE_HTML=site/_build/html $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_site_browser.py \
	  tests/test_jupyterlab_browser.py

clean-venv:
	rm -rf $(VENV)
