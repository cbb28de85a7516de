# Thin wrapper over CMake (neovim's pattern): the real build is CMakeLists.txt.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
BUILD_NOBLAS ?= build-noblas
BUILD_WEB  ?= build-web
FUZZ_SECONDS ?= 30
CMAKE_FLAGS ?=
ARGS ?=

.PHONY: all run test test-asan test-noblas test-web web fuzz bootstrap clean distclean

all: $(BUILD)/.ran-cmake
	cmake --build $(BUILD) -j

bootstrap:
	@scripts/bootstrap.sh

$(BUILD)/.ran-cmake: | bootstrap
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	@touch $@

run: bootstrap all
	./$(BUILD)/attnlab $(ARGS)

test: bootstrap all
	cd $(BUILD) && ctest --output-on-failure -j2

# The whole suite built with AddressSanitizer + UBSan, at -O1 as ASan's
# documentation advises for reasonable speed. Third-party leaks are suppressed in tests/lsan.supp; the window draws with SDL's software renderer
# and no GL-backed window surface, since mesa's GL (all Xvfb offers) leaks in
# code it unloads, where no suppression can name it.
test-asan: bootstrap
	cmake -S . -B $(BUILD_ASAN) -DATTNLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1"
	cmake --build $(BUILD_ASAN) -j
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp SDL_RENDER_DRIVER=software SDL_FRAMEBUFFER_ACCELERATION=0 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2

# The portable build: no BLAS (ops.c's plain C matrix product) and no OpenMP
# (one core), compiled by clang as the web page's engine is (emcc is clang:
# its OpenMP simd reductions start at −FLT_MAX where gcc's start at −∞, which
# once made a left-padded row NaN on the page alone). Runs the engine's tests
# and the numpy reference on it.
test-noblas: bootstrap
	@scripts/bootstrap.sh clang
	CC=clang cmake -S . -B $(BUILD_NOBLAS) -DATTNLAB_BLAS=OFF -DATTNLAB_OPENMP=OFF
	cmake --build $(BUILD_NOBLAS) -j
	cd $(BUILD_NOBLAS) && ctest --output-on-failure -j2 -L engine

# The web page (issue 24): the engine, the lessons and the app core compiled
# with Debian's emcc (no BLAS, no OpenMP, wasm SIMD) into a static site in
# $(BUILD_WEB): index.html, canvas.js, sw.js, and two builds of the module:
# attnlab.js/.wasm/.data (one thread) and attnlab-mt.js/.wasm/.worker.js/.data
# (emcc -pthread: the engine on Web Workers), which the page loads when it is
# cross-origin isolated. Their C libraries come from Debian's source packages
# (scripts/web/deps.sh), compiled once for each; emcc's JS tools need Debian's
# acorn (NODE_PATH). Try it: python3 -m http.server -d $(BUILD_WEB)
# The libraries are built once per machine, not once per clone: kept under
# ~/.cache/attnlab/wasm-deps/KEY, KEY a hash of deps.sh (its pins and flags) and
# of emcc's version, so that a change of either builds them again. WEB_DEPS=DIR
# builds them elsewhere.
WEB_DEPS_KEY = $(shell { cat scripts/web/deps.sh; emcc --version 2>/dev/null | head -1; } | sha256sum | cut -c1-16)
WEB_DEPS ?= $(HOME)/.cache/attnlab/wasm-deps/$(WEB_DEPS_KEY)
WEB_ENV = NODE_PATH=/usr/share/nodejs PKG_CONFIG_LIBDIR=$(abspath $(WEB_DEPS))/$(1)lib/pkgconfig
# $(call web_build,DIR,DEPS SUBDIR,C FLAGS,CMAKE OPTIONS)
define web_build
	$(call WEB_ENV,$(2)) emcmake cmake -S . -B $(BUILD_WEB)/$(1) -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BLAS=OFF \
	  -DATTNLAB_OPENMP=OFF "-DCMAKE_C_FLAGS=$(3)" -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=BOTH \
	  -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=BOTH -DATTNLAB_WEB_OUT=$(abspath $(BUILD_WEB)) $(4)
	$(call WEB_ENV,$(2)) cmake --build $(BUILD_WEB)/$(1) -j2
endef
web:
	@scripts/bootstrap.sh emscripten fonttools
	scripts/web/deps.sh $(WEB_DEPS)
	scripts/web/deps.sh $(WEB_DEPS) --pthread
	$(call web_build,obj,,-msimd128,-DATTNLAB_WEB_THREADS=OFF)
	$(call web_build,obj-mt,pthread/,-msimd128 -pthread,-DATTNLAB_WEB_THREADS=ON)

# The page in headless Chromium (tests/web, called by .ci/run): Debian's
# chromium driven by puppeteer-core, pinned in tests/web/package-lock.json;
# then a phone and a tablet by touch alone (test_web_touch.js, the threaded build).
# npm is the machine's own (Node.js's): Debian's npm package conflicts with
# nodesource's nodejs, so bootstrap does not install it.
test-web: web all
	@scripts/bootstrap.sh chromium
	@command -v npm >/dev/null || { echo "test-web: npm not found: install Node.js 20 with its npm (not Debian's npm package)" >&2; exit 1; }
	cd tests/web && npm ci --no-audit --no-fund --silent
	node tests/web/test_web.js $(BUILD_WEB) --attnlab $(BUILD)/attnlab
	node tests/web/test_web_load.js $(BUILD_WEB)
	node tests/web/test_web_touch.js $(BUILD_WEB)

# A short libFuzzer run over the trace reader, the lesson parser, the
# tokenizer, a model's text ('|' rows) and the window's app core over crafted traces (clang + ASan + UBSan),
# in two rounds on the two cores (the trace reader, a model's text and the
# lessons; then the tokenizer and the app core): each writes its log, shown
# when its round ends, and a round fails if any of its targets does.
FUZZ_RUN = ASAN_OPTIONS=detect_leaks=1 ./$(BUILD_FUZZ)/tests
FUZZ_ARGS = -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1
fuzz:
	@scripts/bootstrap.sh clang
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DATTNLAB_FUZZ=ON -DATTNLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD_FUZZ) -j --target fuzz_trace fuzz_lesson fuzz_tokenizer fuzz_app fuzz_text
	mkdir -p $(BUILD_FUZZ)/corpus $(BUILD_FUZZ)/lesson_corpus $(BUILD_FUZZ)/tokenizer_corpus $(BUILD_FUZZ)/app_corpus \
	  $(BUILD_FUZZ)/text_corpus
	$(FUZZ_RUN)/fuzz_trace $(FUZZ_ARGS) $(BUILD_FUZZ)/corpus tests/fuzz/corpus > $(BUILD_FUZZ)/fuzz_trace.log 2>&1 & a=$$!; \
	$(FUZZ_RUN)/fuzz_text $(FUZZ_ARGS) $(BUILD_FUZZ)/text_corpus tests/fuzz/text_corpus \
	  > $(BUILD_FUZZ)/fuzz_text.log 2>&1 & c=$$!; \
	$(FUZZ_RUN)/fuzz_lesson $(FUZZ_ARGS) -dict=tests/fuzz/lesson.dict $(BUILD_FUZZ)/lesson_corpus tests/fuzz/lesson_corpus \
	  > $(BUILD_FUZZ)/fuzz_lesson.log 2>&1; b=$$?; wait $$a; a=$$?; wait $$c; c=$$?; \
	cat $(BUILD_FUZZ)/fuzz_trace.log $(BUILD_FUZZ)/fuzz_text.log $(BUILD_FUZZ)/fuzz_lesson.log; \
	test $$a = 0 && test $$b = 0 && test $$c = 0
	$(FUZZ_RUN)/fuzz_tokenizer $(FUZZ_ARGS) -dict=tests/fuzz/tokenizer.dict $(BUILD_FUZZ)/tokenizer_corpus \
	  tests/fuzz/tokenizer_corpus > $(BUILD_FUZZ)/fuzz_tokenizer.log 2>&1 & a=$$!; \
	OMP_NUM_THREADS=1 $(FUZZ_RUN)/fuzz_app $(FUZZ_ARGS) $(BUILD_FUZZ)/app_corpus tests/fuzz/app_corpus \
	  > $(BUILD_FUZZ)/fuzz_app.log 2>&1; b=$$?; wait $$a; a=$$?; \
	cat $(BUILD_FUZZ)/fuzz_tokenizer.log $(BUILD_FUZZ)/fuzz_app.log; test $$a = 0 && test $$b = 0

clean:
	-cmake --build $(BUILD) --target clean

distclean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ) $(BUILD_NOBLAS) $(BUILD_WEB)
