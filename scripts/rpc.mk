# Compiles ggml's RPC back end (libggml-rpc.so) from the source bundle against the prebuilt libraries, as a
# back end ggml loads at run time (GGML_BACKEND_DL): ggml_backend_load_all_from_path finds it beside the
# CPU back ends. Invoked by the top Makefile: make -f scripts/rpc.mk SRC=... LIB=... OBJ=...
CXX ?= g++
SOURCES := $(addprefix $(SRC)/ggml/src/ggml-rpc/,ggml-rpc.cpp transport.cpp)
OBJECTS := $(patsubst $(SRC)/%,$(OBJ)/%.o,$(SOURCES))
FLAGS := -O2 -fPIC -DGGML_BACKEND_DL -DGGML_BACKEND_SHARED -DGGML_BACKEND_BUILD -DGGML_SHARED \
         -I$(SRC)/ggml/include -I$(SRC)/ggml/src -I$(SRC)/ggml/src/ggml-rpc

$(LIB)/libggml-rpc.so: $(OBJECTS)
	$(CXX) -shared -o $@ $^ -L$(LIB) -lggml-base -lpthread -Wl,-rpath,'$$ORIGIN' -Wl,--no-undefined
	@echo "built $@"

$(OBJ)/%.cpp.o: $(SRC)/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(FLAGS) -c $< -o $@
