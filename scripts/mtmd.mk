# Compiles libmtmd (multimodal: images and audio) from the source bundle against the prebuilt libraries.
# Invoked by the top Makefile once the source is cloned: make -f scripts/mtmd.mk SRC=... LIB=... OBJ=...
CXX ?= g++
SOURCES := $(addprefix $(SRC)/tools/mtmd/,mtmd.cpp mtmd-audio.cpp mtmd-image.cpp mtmd-helper.cpp mtmd-helper-gen.cpp clip.cpp) \
           $(wildcard $(SRC)/tools/mtmd/models/*.cpp) $(SRC)/vendor/hash/hash.cpp
C_SOURCES := $(addprefix $(SRC)/vendor/hash/,xxhash/xxhash.c sha256/sha256.c)
CXX_AS_C := $(SRC)/vendor/hash/sha1/sha1.c
OBJECTS := $(patsubst $(SRC)/%,$(OBJ)/%.o,$(SOURCES) $(C_SOURCES) $(CXX_AS_C))
FLAGS := -O2 -fPIC -I$(SRC)/include -I$(SRC)/ggml/include -I$(SRC)/tools/mtmd -I$(SRC)/vendor -I$(SRC)/vendor/hash
LLAMA_LIB := $(notdir $(firstword $(wildcard $(LIB)/libllama.v*.so $(LIB)/libllama.*.v*.so) $(LIB)/libllama.so))
GGML_LIB := $(notdir $(firstword $(wildcard $(LIB)/libggml.v*.so $(LIB)/libggml.*.v*.so) $(LIB)/libggml.so))

$(LIB)/libmtmd.so: $(OBJECTS)
	$(CXX) -shared -o $@ $^ -L$(LIB) -l:$(LLAMA_LIB) -l:$(GGML_LIB) -lggml-base -lpthread -Wl,-rpath,'$$ORIGIN' -Wl,--no-undefined
	@echo "built $@"

$(OBJ)/%.cpp.o: $(SRC)/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 $(FLAGS) -c $< -o $@

$(OBJ)/vendor/hash/sha1/sha1.c.o: $(SRC)/vendor/hash/sha1/sha1.c
	@mkdir -p $(dir $@)
	$(CXX) -x c++ -std=c++17 -w $(FLAGS) -c $< -o $@

$(OBJ)/%.c.o: $(SRC)/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -w $(FLAGS) -c $< -o $@
