# Thin wrapper over CMake (neovim's pattern): the real build is CMakeLists.txt.
BUILD      ?= build
BUILD_ASAN ?= build-asan
CMAKE_FLAGS ?=
ARGS ?=

.PHONY: all run test test-asan bootstrap clean distclean

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

# The whole suite built with AddressSanitizer + UBSan.
test-asan: bootstrap
	cmake -S . -B $(BUILD_ASAN) -DATTNLAB_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(BUILD_ASAN) -j
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2

clean:
	-cmake --build $(BUILD) --target clean

distclean:
	rm -rf $(BUILD) $(BUILD_ASAN)
