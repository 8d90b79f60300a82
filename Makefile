# Every target does its own set-up from a fresh clone: nothing needs installing by hand.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# The CPU build of torch that lies on this machine's disk; a plain `torch` requirement would pull CUDA.
TORCH_SPEC ?= torch==2.13.0
EXTRAS := ml,dist,manifold,network,cluster,outliers,hf,quant,active,images,dev,docs
STAMP := $(VENV)/.installed

.PHONY: install test demo docs bench clean

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	# fill numba's on-disk cache now, so that no first call after install compiles
	$(BIN)/python -c "import statcore; statcore.warmup()"
	touch $@

# Two workers on CI's two cores, one BLAS/OpenMP thread each (more threads only oversubscribe).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	MPLBACKEND=Agg OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n 2 --dist loadfile

# Two vignette kernels at once, one BLAS/OpenMP thread each, as in make test.
demo: $(STAMP)
	MPLBACKEND=Agg OMP_NUM_THREADS=1 $(BIN)/python -m statcore._vignettes vignettes build/vignettes --jobs 2

# The site reuses the notebooks that demo executed; docs/README.md says what it holds.
docs: demo
	MPLBACKEND=Agg $(BIN)/python docs/build.py build/docs --notebooks build/vignettes

bench: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python benchmarks/run.py --output build/benchmarks.md

clean:
	rm -rf build .pytest_cache
