// The one HTML page of the web UI: the stylesheet inline, the bundled script beside it at /ui/app.js.
import styles from "../../webui/styles.css" with { type: "text" };

export function webUiPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>${styles}</style>
</head>
<body>
<div id="app"><p class="boot">Loading llamux…</p></div>
<noscript>The llamux web UI needs JavaScript.</noscript>
<script type="module" src="/ui/app.js"></script>
</body>
</html>
`;
}
