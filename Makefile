# respbench: `make demo` runs a real benchmark against a local redis-server; `make test` runs
# every test. Both install what they need (Debian's redis-server and redis-tools, and
# valkey-server) when missing.

CARGO ?= cargo

.PHONY: all build release deps test lint demo bench bench-openloop clean man completions install uninstall deb image image-tag

all: build

build:
	$(CARGO) build

release:
	$(CARGO) build --release --bin respbench --example floor --example manual

# Installing and packaging. The version is Cargo.toml's; IMAGE is the one tag `make image` builds
# (deploy/kubernetes names it; tests/install.rs checks that through `make image-tag`).
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
IMAGE ?= localhost/respbench:$(VERSION)
PREFIX ?= /usr/local
MANUAL = target/manual

# Manual pages (respbench(1), one per subcommand) and bash, zsh and fish completions, from the
# clap definitions, into target/manual.
man: release
	target/release/examples/manual $(MANUAL)
completions: man

# make install [PREFIX=/usr/local] [DESTDIR=] [FRONT_ENDS=1]; make uninstall removes exactly that.
install: man
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" FRONT_ENDS="$(FRONT_ENDS)" MANUAL=$(MANUAL) scripts/install.sh install

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh uninstall

# target/deb/respbench_VERSION_ARCH.deb and respbench-frontends_VERSION_ARCH.deb (dpkg-deb).
deb: man
	VERSION=$(VERSION) MANUAL=$(MANUAL) scripts/deb.sh

# The container image IMAGE, from scratch: the release binary and the libraries it loads, copied
# from this machine (podman or buildah; nothing is pulled).
image: release
	VERSION=$(VERSION) IMAGE=$(IMAGE) scripts/image.sh

image-tag:
	@echo $(IMAGE)

deps:
	@scripts/install-deps.sh

# Unit, property and end-to-end tests (the latter start their own servers on free ports).
# Without nextest (which runs the timing-sensitive tests alone), one test at a time: tests
# that measure rates and gaps must not share the 2 cores with a cluster starting up.
# The engine's tests run once per I/O path: the whole suite as `--io auto` (the default)
# chooses, io_uring where the kernel allows it, then the tests that drive the event loop again
# on epoll (RESPBENCH_IO is read by every front-end the tests start). The A/B verdict tests
# (`ab`, some of the longest tests) judge statistics over runs, the same on either path: once. So does
# the capacity search's test against a real server (a search over runs, 25 s alone on the cores).
NOT_ENGINE = binary(=fuzz_corpus) | binary(=json_schema) | binary(=k8s) | binary(=scan_differential) \
	| binary(=slurm) | binary(=merge_memtier) | binary(=io_paths) | binary(=module_graph) | binary(=example_guides) \
	| binary(=ab) | test(=capacity_search_finds_a_rate_that_holds_by_hand) | binary(=install)
# The install and package tests (tests/install.rs) use the release build made first.
test: deps release
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --no-fail-fast && \
		RESPBENCH_IO=epoll $(CARGO) nextest run --no-fail-fast -E 'kind(test) - ($(NOT_ENGINE))'; \
	else \
		$(CARGO) test --no-fail-fast -- --test-threads=1 && \
		RESPBENCH_IO=epoll $(CARGO) test --no-fail-fast --tests -- --test-threads=1; \
	fi

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --all-targets -- -D warnings

demo: deps release
	@scripts/demo.sh

# Side by side with redis-benchmark (and memtier_benchmark / valkey-benchmark when on PATH).
# Closed loop beside the peers on PATH, the open-loop table at 50 to 10,000 connections, then
# GET and SET of 100 KB and 1 MB values beside their floor, opening 10,000 connections, and TLS
# (GETs beside a TLS floor, handshakes full and resumed).
bench: deps release
	@python3 scripts/bench.py
	@python3 scripts/openloop_bench.py
	@python3 scripts/bench_sizes.py
	@python3 scripts/bench_tls.py

# Paced (--rate) cost per request against closed loop at 50 to 10,000 connections.
bench-openloop: deps release
	@python3 scripts/openloop_bench.py

clean:
	$(CARGO) clean
