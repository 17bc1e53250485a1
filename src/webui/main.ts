// Entry of the web UI's bundle (built into the executable by src/server/webui/bundle.ts).
import { html, render } from "htm/preact";
import { App } from "./app.ts";

const root = document.getElementById("app")!;
root.textContent = ""; // the "Loading" placeholder
render(html`<${App} />`, root);
