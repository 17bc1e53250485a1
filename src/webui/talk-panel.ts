// The chat's "Talk" button: a spoken conversation with the chosen model over /v1/realtime (talk.ts). The
// turns show as they come: the user's (with the server's transcript when it transcribes) and the
// replies' words, with how much of the replies' audio has played. The chat's temperature and max tokens
// apply to the replies. The voice is the server's (--realtime-voice-model or a --realtime-config preset).
import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Sampling } from "./chat-stream.ts";
import { Talk } from "./talk.ts";

interface Turn {
  id: string;
  role: "user" | "assistant";
  text: string;
  status?: string;
}

export function TalkPanel(props: { model: string | undefined; sampling: Sampling; disabled: boolean }) {
  const [talking, setTalking] = useState(false);
  const [hearing, setHearing] = useState(false);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [played, setPlayed] = useState(0);
  const [error, setError] = useState<string>();
  const talk = useRef<Talk | undefined>(undefined);

  useEffect(() => () => talk.current?.stop(), []);

  const upsert = (id: string, role: Turn["role"], change: (turn: Turn) => Turn) =>
    setTurns((all) => {
      const at = all.findIndex((turn) => turn.id === id);
      if (at < 0) return [...all, change({ id, role, text: "" })];
      return all.map((turn, i) => (i === at ? change(turn) : turn));
    });

  const start = () => {
    if (!props.model) return;
    setError(undefined);
    setTurns([]);
    setPlayed(0);
    const session = new Talk({
      onSpeech: setHearing,
      onUserTurn: (id) => upsert(id, "user", (turn) => turn),
      onUserTranscript: (id, text) => upsert(id, "user", (turn) => ({ ...turn, text })),
      onReplyText: (id, text) => upsert(id, "assistant", (turn) => ({ ...turn, text })),
      onReplyDone: (id, status) => upsert(id, "assistant", (turn) => ({ ...turn, status })),
      onPlayed: setPlayed,
      onError: setError,
      onClosed: () => {
        setTalking(false);
        setHearing(false);
        if (talk.current === session) talk.current = undefined;
      },
    });
    talk.current = session;
    setTalking(true);
    session.start({ model: props.model, maxOutputTokens: props.sampling.maxTokens, temperature: props.sampling.temperature }).catch((e: Error) => {
      setError(e.message);
      session.stop();
    });
  };

  const status = !talking ? "" : hearing ? "Hearing you…" : "Listening";
  return html`<section class="panel talk" aria-label="Talk">
    <div class="row">
      ${talking
        ? html`<button type="button" class="danger" onClick=${() => talk.current?.stop()}>Stop talking</button>`
        : html`<button type="button" class="primary" disabled=${props.disabled || !props.model} onClick=${start}
            title="Speak with the model over /v1/realtime (microphone, the server's voice)">Talk</button>`}
      <span class="muted" role="status">${status}</span>
      ${played > 0 && html`<span class="muted" aria-label="Audio played">Played ${played.toFixed(2)} s of audio</span>`}
    </div>
    ${turns.length > 0 && html`<div class="messages" aria-label="Spoken conversation">${turns.map((turn) => html`<article class=${`msg ${turn.role}`}
        aria-label=${turn.role === "user" ? "You said" : "Spoken reply"}>
      <span class="who">${turn.role === "user" ? "You (spoken)" : "Assistant"}${turn.status && turn.status !== "completed" ? ` · ${turn.status}` : ""}</span>
      <div class="content">${turn.text || (turn.role === "user" ? "(speech)" : "")}</div>
    </article>`)}</div>`}
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </section>`;
}
