// Entry of the web UI's bundle (built into the executable by src/server/webui/bundle.ts).
import { html, render } from "htm/preact";
import { App } from "./app.ts";

render(html`<${App} />`, document.getElementById("app")!);
