// Chat: pick a model, set temperature, max tokens and top-p, send text and images (upload, drag and
// drop, or URL), watch the reply stream in with its reasoning apart, stop it, start a new chat, or talk
// with the model by voice (talk-panel.ts).
// Conversations are kept in this browser.
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { ModelsState } from "./app.ts";
import { streamChat, type Sampling } from "./chat-stream.ts";
import { loadConversations, newConversation, saveConversations, type ChatMessage, type Conversation } from "./conversations.ts";
import { isLoaded, modelLabel } from "./types.ts";
import { speak } from "./speech.ts";
import { TalkPanel } from "./talk-panel.ts";

const SETTINGS_STORAGE = "llamux.chatSettings";
const defaultSampling: Sampling = { temperature: 0.7, maxTokens: 512, topP: 0.95 };

function readSampling(): Sampling {
  try {
    return { ...defaultSampling, ...(JSON.parse(localStorage.getItem(SETTINGS_STORAGE) ?? "{}") as Partial<Sampling>) };
  } catch {
    return defaultSampling;
  }
}

function readFile(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(`Cannot read "${file.name}"`));
    reader.readAsDataURL(file);
  });
}

function Message(props: { message: ChatMessage; streaming: boolean }) {
  const m = props.message;
  return html`<article class=${`msg ${m.role}`} aria-label=${m.role === "user" ? "You" : "Assistant"}>
    <span class="who">${m.role === "user" ? "You" : "Assistant"}</span>
    ${m.images?.length ? html`<div class="attachments">${m.images.map((src, i) => html`<img src=${src} alt=${`Attached image ${i + 1}`} />`)}</div>` : ""}
    ${m.reasoning && html`<details class="reasoning" open=${props.streaming && !m.content}><summary>Reasoning</summary>${m.reasoning}</details>`}
    ${props.streaming && !m.content && !m.reasoning && html`<span class="muted" aria-label="Waiting for the reply">…</span>`}
    <div class="content">${m.content}</div>
    ${m.audio && html`<audio controls src=${m.audio} aria-label="Spoken answer"></audio>`}
    ${m.error && html`<p class="error" role="alert">${m.error}</p>`}
    ${m.note && html`<p class="muted note" style="margin: .25rem 0 0; font-size: .8rem">${m.note}</p>`}
  </article>`;
}

export function ChatTab(props: { models: ModelsState }) {
  const llms = props.models.models.filter((m) => m.type !== "embedding" && m.type !== "embeddings");
  const [conversations, setConversations] = useState<Conversation[]>(loadConversations);
  const [currentId, setCurrentId] = useState<string | undefined>(conversations[0]?.id);
  const [modelKey, setModelKey] = useState<string>(conversations[0]?.model ?? "");
  const [sampling, setSampling] = useState<Sampling>(readSampling);
  const [draft, setDraft] = useState("");
  const [images, setImages] = useState<string[]>([]);
  const [imageUrl, setImageUrl] = useState("");
  const [dragging, setDragging] = useState(false);
  const [streamingId, setStreamingId] = useState<string>();
  const [error, setError] = useState<string>();
  const abort = useRef<AbortController | undefined>(undefined);
  const fileInput = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLDivElement>(null);

  const model = llms.find((m) => m.key === modelKey) ?? llms.find(isLoaded) ?? llms[0];
  const current = conversations.find((c) => c.id === currentId);

  useEffect(() => saveConversations(conversations), [conversations]);
  useEffect(() => localStorage.setItem(SETTINGS_STORAGE, JSON.stringify(sampling)), [sampling]);
  useEffect(() => {
    list.current?.scrollTo({ top: list.current.scrollHeight });
  }, [current?.messages]);

  const update = (id: string, change: (c: Conversation) => Conversation) =>
    setConversations((all) => all.map((c) => (c.id === id ? change(c) : c)).sort((a, b) => b.updatedAt - a.updatedAt));
  const updateLast = (id: string, change: (m: ChatMessage) => ChatMessage) =>
    update(id, (c) => ({ ...c, messages: [...c.messages.slice(0, -1), change(c.messages.at(-1)!)] }));

  const attachFiles = async (files: FileList | File[] | null) => {
    const chosen = [...(files ?? [])].filter((f) => f.type.startsWith("image/"));
    if (files && chosen.length < [...files].length) setError("Only image files can be attached");
    const urls = await Promise.all(chosen.map(readFile));
    setImages((old) => [...old, ...urls]);
  };

  const addImageUrl = () => {
    const url = imageUrl.trim();
    if (!/^(https?:|data:image\/)/.test(url)) {
      setError("An image URL starts with http://, https:// or data:image/");
      return;
    }
    setImages((old) => [...old, url]);
    setImageUrl("");
  };

  const send = async (event?: Event) => {
    event?.preventDefault();
    if (!model || streamingId || (!draft.trim() && images.length === 0)) return;
    setError(undefined);
    setModelKey(model.key);
    let conversation = current;
    if (!conversation) {
      conversation = newConversation(model.key);
      const created = conversation;
      setConversations((all) => [created, ...all]);
      setCurrentId(created.id);
    }
    const user: ChatMessage = { role: "user", content: draft.trim(), ...(images.length ? { images } : {}) };
    const history = [...conversation.messages.filter((m) => !m.error), user];
    const id = conversation.id;
    const title = conversation.messages.length === 0 ? (user.content || "Image").slice(0, 40) : conversation.title;
    update(id, (c) => ({ ...c, title, model: model.key, updatedAt: Date.now(), messages: [...c.messages, user, { role: "assistant", content: "" }] }));
    setDraft("");
    setImages([]);
    setStreamingId(id);
    const controller = new AbortController();
    abort.current = controller;
    const started = performance.now();
    try {
      if (model.capabilities?.speech) {
        // a text-to-speech model speaks the message instead of answering it
        const spoken = await speak(model.key, user.content, sampling, controller.signal);
        updateLast(id, (m) => ({ ...m, audio: spoken.audio, note: `speech · ${Math.round(spoken.bytes / 1024)} KiB WAV` }));
        return;
      }
      const result = await streamChat(model.key, history, sampling, {
        onContent: (text) => updateLast(id, (m) => ({ ...m, content: m.content + text })),
        onReasoning: (text) => updateLast(id, (m) => ({ ...m, reasoning: (m.reasoning ?? "") + text })),
      }, controller.signal);
      const seconds = (performance.now() - started) / 1000;
      const tokens = result.completionTokens;
      updateLast(id, (m) => ({ ...m, note: tokens !== undefined ? `${tokens} tokens · ${(tokens / seconds).toFixed(1)} tok/s · ${result.finishReason ?? "done"}` : result.finishReason ?? "done" }));
    } catch (e) {
      if (controller.signal.aborted) updateLast(id, (m) => ({ ...m, note: "Stopped" }));
      else updateLast(id, (m) => ({ ...m, error: (e as Error).message }));
    } finally {
      setStreamingId(undefined);
      abort.current = undefined;
      void props.models.refresh();
    }
  };

  const startNew = () => {
    abort.current?.abort();
    setCurrentId(undefined);
    setDraft("");
    setImages([]);
  };

  const remove = (id: string) => {
    setConversations((all) => all.filter((c) => c.id !== id));
    if (id === currentId) setCurrentId(undefined);
  };

  const number = (field: keyof Sampling) => (e: Event) => {
    const value = Number((e.target as HTMLInputElement).value);
    if (Number.isFinite(value)) setSampling({ ...sampling, [field]: value });
  };

  return html`<div class="chat">
    <aside class="panel">
      <button class="primary" style="width: 100%" onClick=${startNew}>New chat</button>
      <h3>Conversations</h3>
      ${conversations.length === 0 ? html`<p class="muted">None yet.</p>` : html`<ul class="plain">${conversations.map((c) => html`<li>
        <button class="conv" aria-current=${c.id === currentId} onClick=${() => { setCurrentId(c.id); setModelKey(c.model); }}>${c.title}</button>
        <button onClick=${() => remove(c.id)} aria-label=${`Delete conversation ${c.title}`}>×</button>
      </li>`)}</ul>`}
    </aside>
    <div>
      <div class="panel">
        <div class="row">
          <label for="chat-model" class="grow">Model
            <select id="chat-model" value=${model?.key ?? ""} onChange=${(e: Event) => setModelKey((e.target as HTMLSelectElement).value)}>
              ${llms.length === 0 && html`<option value="">No models installed</option>`}
              ${llms.map((m) => html`<option value=${m.key}>${modelLabel(m)}${isLoaded(m) ? " (loaded)" : ""}${m.capabilities?.vision ? " · vision" : ""}${m.capabilities?.speech ? " · speech" : ""}</option>`)}
            </select></label>
          <label for="chat-temperature">Temperature<input id="chat-temperature" type="number" min="0" max="2" step="0.05" value=${sampling.temperature} onInput=${number("temperature")} /></label>
          <label for="chat-max-tokens">Max tokens<input id="chat-max-tokens" type="number" min="1" step="1" value=${sampling.maxTokens} onInput=${number("maxTokens")} /></label>
          <label for="chat-top-p">Top P<input id="chat-top-p" type="number" min="0" max="1" step="0.05" value=${sampling.topP} onInput=${number("topP")} /></label>
        </div>
      </div>
      <div class="panel">
        <div class="messages" ref=${list} aria-live="polite" aria-label="Messages">
          ${!current?.messages.length && html`<p class="muted">Send a message to start${model ? ` chatting with ${modelLabel(model)}` : ""}.</p>`}
          ${current?.messages.map((m, i) => html`<${Message} message=${m} streaming=${streamingId === current.id && i === current.messages.length - 1} />`)}
        </div>
      </div>
      <form class=${`panel composer${dragging ? " dragging" : ""}`} onSubmit=${send}
        onDragOver=${(e: DragEvent) => { e.preventDefault(); setDragging(true); }}
        onDragLeave=${() => setDragging(false)}
        onDrop=${(e: DragEvent) => { e.preventDefault(); setDragging(false); void attachFiles(e.dataTransfer?.files ?? null); }}>
        <label for="chat-input">Message <span class="muted">(Enter sends, Shift+Enter for a new line; drop images here)</span></label>
        <textarea id="chat-input" rows="3" value=${draft} onInput=${(e: Event) => setDraft((e.target as HTMLTextAreaElement).value)}
          onKeyDown=${(e: KeyboardEvent) => { if (e.key === "Enter" && !e.shiftKey) void send(e); }}></textarea>
        ${images.length > 0 && html`<div class="attachments" aria-label="Attached images">${images.map((src, i) => html`<figure>
          <img src=${src} alt=${`Attachment ${i + 1}`} />
          <button type="button" onClick=${() => setImages(images.filter((_, j) => j !== i))} aria-label=${`Remove attachment ${i + 1}`}>Remove</button>
        </figure>`)}</div>`}
        ${model && !model.capabilities?.vision && images.length > 0 && html`<p class="muted">${modelLabel(model)} may not read images: choose a vision model.</p>`}
        <div class="row" style="margin-top: .5rem">
          <input ref=${fileInput} id="chat-file" class="sr-only" type="file" accept="image/*" multiple onChange=${(e: Event) => { const input = e.target as HTMLInputElement; void attachFiles(input.files).then(() => (input.value = "")); }} />
          <button type="button" onClick=${() => fileInput.current?.click()}>Attach image</button>
          <label for="chat-image-url" class="sr-only">Image URL</label>
          <input id="chat-image-url" type="url" placeholder="or paste an image URL" value=${imageUrl} class="grow"
            onInput=${(e: Event) => setImageUrl((e.target as HTMLInputElement).value)}
            onKeyDown=${(e: KeyboardEvent) => { if (e.key === "Enter") { e.preventDefault(); addImageUrl(); } }} />
          <button type="button" onClick=${addImageUrl} disabled=${!imageUrl.trim()}>Add URL</button>
          ${streamingId
            ? html`<button type="button" class="danger" onClick=${() => abort.current?.abort()}>Stop</button>`
            : html`<button type="submit" class="primary" disabled=${!model || (!draft.trim() && images.length === 0)}>Send</button>`}
        </div>
        ${error && html`<p class="error" role="alert">${error}</p>`}
      </form>
      <${TalkPanel} model=${model?.key} sampling=${sampling} disabled=${Boolean(model?.capabilities?.speech)} />
    </div>
  </div>`;
}
