// A client run inside a network namespace (`ip netns exec NS bun netns-client.ts ...`), since the test
// process itself lives outside it. Prints one JSON line describing what it got.
//   json URL BODY     POST BODY, print {status, body}
//   stream URL BODY   POST BODY with stream: true, print "chunk" lines as SSE data arrives, then {done, error}
//   get URL           GET, print {status}
const [mode, url, body] = process.argv.slice(2);
if (mode === "get") {
  const response = await fetch(url!);
  console.log(JSON.stringify({ status: response.status }));
} else if (mode === "json") {
  const response = await fetch(url!, { method: "POST", headers: { "content-type": "application/json" }, body: body!, timeout: false } as RequestInit);
  console.log(JSON.stringify({ status: response.status, body: await response.json() }));
} else if (mode === "stream") {
  let done = false;
  let error: string | undefined;
  try {
    const response = await fetch(url!, { method: "POST", headers: { "content-type": "application/json" }, body: body!, timeout: false } as RequestInit);
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of response.body!) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event.replace(/^data: /, "");
        if (data === "[DONE]") done = true;
        else if (data.includes("\"error\"")) error = data;
        else console.log("chunk");
      }
    }
  } catch (e) {
    error = (e as Error).message;
  }
  console.log(JSON.stringify({ done, error }));
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
export {};
