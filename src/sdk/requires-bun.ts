// What `import "llamux"` is outside Bun (package.json's exports): the in-process SDK runs llama.cpp through
// bun:ffi, so anywhere else it stops at once with the way out, rather than deep inside a Worker.
throw new Error('The in-process llamux SDK ("llamux") runs on Bun, which it needs for bun:ffi: on Node or in a browser, import "llamux/remote" (RemoteModelRunner and Conversation against a running server)');
