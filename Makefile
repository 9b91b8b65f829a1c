# The compendium's task runner. Each target installs what it needs into .venv first, so on a fresh
# machine with Python 3.11 the two README commands are all there is:
#   make results   # run every notebook on the embedded data into results/
#   make test      # unit, golden and calibration tests + every notebook under nbval (small parameters)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml setup.py requirements/constraints.txt requirements/excludes.txt jupyter/*/*.json jupyter/*/*/*/*.json | cksum | cut -d' ' -f1)

.PHONY: setup results reproduce atlas test test-slow bench clean-venv site browser-test class

$(STAMP): pyproject.toml setup.py requirements/constraints.txt requirements/excludes.txt $(wildcard jupyter/*/*.json jupyter/*/*/*/*.json)
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), f"Python 3.11 needed, this is {sys.version.split()[0]}"'
	$(PYTHON) -m venv $(VENV)
	# uv installs the pinned versions from its cache in ~20 s (pip took 80 s of a fresh clone's `make test`);
	# --compile-bytecode as pip does: with PYTHONDONTWRITEBYTECODE set, every process would compile scipy & co.
	$(BIN)/python -m pip install --quiet -c requirements/constraints.txt uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -c requirements/constraints.txt \
	  --excludes requirements/excludes.txt -e ".[notebooks,dist,test,site]"
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

# Every dataset-agnostic notebook on every atlas dataset (sweeps; notebooks/atlas_parameters.yml), then the
# cross-dataset notebook 70, into results/atlas/ with the index results/atlas/README.md, then the reproduction
# report against the committed files. Like make results, it skips only what this checkout ran with the same inputs
# (a fresh clone reruns everything). ATLAS_ARGS: e.g. --scheduler ADDRESS (a Dask cluster), --datasets
# summeval,realsumm,./my_study, --notebooks 00,70, --force.
atlas: setup
	$(BIN)/python -m metaeval.run.atlas --workers 2 --report $(ATLAS_ARGS)

# Every notebook at the class preset (notebooks/class_parameters.yml) into results/runs/class/, with measured times.
class: setup
	$(BIN)/metaeval class

# Every notebook figure is checked for text cut off, text over text and legends over data as nbval draws it
# (metaeval.studies.plotting.layout_problems): FIGURE_CHECK=raise makes a figure with such a problem fail its cell.
FIGURE_CHECK ?= raise

# pytest-xdist, one worker per core; --dist loadfile keeps a file on one worker: a notebook's cells run in order
# in one kernel (nbval), and a module's fixtures are built once. Files are handed out in collection order, the
# slowest first (tests/conftest.py: SLOWEST_FIRST). TEST_JOBS=0 runs everything in one process.
TEST_JOBS ?= auto
XDIST     := -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder

test: setup
	$(BIN)/ruff check lib tests notebooks site
	rm -rf .nbval && $(BIN)/metaeval prepare-ci .nbval
	# bytecode of the library once (~3 s), not in each of the ~200 processes the tests start: Python does not
	# write it itself where PYTHONDONTWRITEBYTECODE is set (this project's CI machines)
	$(BIN)/python -m compileall -q lib
	# mypy (one core, ~20 s) beside pytest, its report printed after pytest's; either failing fails the target
	mkdir -p .cache && $(BIN)/mypy > .cache/mypy.log 2>&1 & mypy=$$!; \
	METAEVAL_FIGURE_CHECK=$(FIGURE_CHECK) $(BIN)/python -m pytest -q -m "not slow" $(XDIST) \
	  tests lib/metaeval .nbval --nbval-lax --nbval-kernel-name metaeval -p no:cacheprovider; tests=$$?; \
	wait $$mypy; types=$$?; echo "mypy:"; cat .cache/mypy.log; test $$tests -eq 0 && test $$types -eq 0

test-slow: setup
	$(BIN)/python -m pytest -q -m slow $(XDIST) tests

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
