// Chat templates (tokenizer.chat_template) for the generated models.

/**
 * ChatML with Hermes-style tools, after Qwen2.5's template: tools are listed in the system turn inside
 * <tools></tools>, assistant calls are <tool_call>{"name", "arguments"}</tool_call>, tool results go back in a
 * user turn inside <tool_response></tool_response>. Unlike Qwen2.5, string `arguments` (OpenAI wire form) are
 * written as given instead of being JSON-encoded a second time.
 */
export const CHATML_HERMES_TEMPLATE = `{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- else %}
        {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\\n' + (message.content if message.content is string else '') + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {%- if tool_call.arguments is string %}
                {{- tool_call.arguments }}
            {%- else %}
                {{- tool_call.arguments | tojson }}
            {%- endif %}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- message.content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
`;

/**
 * LFM2 (after the original LFM2 template, see reference/lmstudio-llamaserver-leap.md §2.7): BOS, the first
 * system message plus "List of tools: <|tool_list_start|>[...]<|tool_list_end|>", ChatML turns, tool results
 * wrapped in <|tool_response_start|>...<|tool_response_end|>. Two fixes over the original: a missing content is
 * empty (not "null"), and assistant tool_calls are written the way the model emits them, pythonic, before the
 * content: <|tool_call_start|>[f(a="x", b=1)]<|tool_call_end|>. Arguments should be a mapping; a string (the
 * OpenAI wire form) is written inside the parentheses as given.
 */
export const LFM2_TEMPLATE = `{{- bos_token -}}
{%- macro py_value(value) -%}
    {%- if value is string -%}{{- value | tojson -}}
    {%- elif value is boolean -%}{{- "True" if value else "False" -}}
    {%- elif value is none -%}{{- "None" -}}
    {%- else -%}{{- value | tojson -}}
    {%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(system_prompt="") -%}
{%- if messages and messages[0]["role"] == "system" -%}
    {%- set ns.system_prompt = messages[0]["content"] -%}
    {%- set messages = messages[1:] -%}
{%- endif -%}
{%- if tools -%}
    {%- set ns.system_prompt = ns.system_prompt + ("\\n" if ns.system_prompt else "") + "List of tools: <|tool_list_start|>[" -%}
    {%- for tool in tools -%}
        {%- if tool is not string -%}{%- set tool = tool | tojson -%}{%- endif -%}
        {%- set ns.system_prompt = ns.system_prompt + tool -%}
        {%- if not loop.last -%}{%- set ns.system_prompt = ns.system_prompt + ", " -%}{%- endif -%}
    {%- endfor -%}
    {%- set ns.system_prompt = ns.system_prompt + "]<|tool_list_end|>" -%}
{%- endif -%}
{%- if ns.system_prompt -%}
    {{- "<|im_start|>system\\n" + ns.system_prompt + "<|im_end|>\\n" -}}
{%- endif -%}
{%- for message in messages -%}
    {{- "<|im_start|>" + message["role"] + "\\n" -}}
    {%- set content = message["content"] -%}
    {%- if content is none or content is not defined -%}{%- set content = "" -%}
    {%- elif content is not string -%}{%- set content = content | tojson -%}
    {%- endif -%}
    {%- if message["role"] == "assistant" and message["tool_calls"] -%}
        {{- "<|tool_call_start|>[" -}}
        {%- for tool_call in message["tool_calls"] -%}
            {%- if tool_call["function"] is defined -%}{%- set tool_call = tool_call["function"] -%}{%- endif -%}
            {{- tool_call["name"] + "(" -}}
            {%- if tool_call["arguments"] is mapping -%}
                {%- for name, value in tool_call["arguments"] | items -%}
                    {{- name + "=" + py_value(value) -}}
                    {%- if not loop.last -%}{{- ", " -}}{%- endif -%}
                {%- endfor -%}
            {%- elif tool_call["arguments"] is string -%}
                {{- tool_call["arguments"] -}}
            {%- endif -%}
            {{- ")" -}}
            {%- if not loop.last -%}{{- ", " -}}{%- endif -%}
        {%- endfor -%}
        {{- "]<|tool_call_end|>" -}}
    {%- endif -%}
    {%- if message["role"] == "tool" -%}
        {%- set content = "<|tool_response_start|>" + content + "<|tool_response_end|>" -%}
    {%- endif -%}
    {{- content + "<|im_end|>\\n" -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- "<|im_start|>assistant\\n" -}}{%- endif -%}
`;

/**
 * ChatML/Hermes as above, for a reasoning model whose template opens the reply's reasoning (as
 * DeepSeek-R1's and Qwen3-Thinking's do): the generation prompt ends with `<think>`, or with an empty
 * `<think></think>` block when the request sets enable_thinking to false.
 */
export const CHATML_HERMES_THINK_TEMPLATE = CHATML_HERMES_TEMPLATE.replace(
  "{{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n",
  "{{- '<|im_start|>assistant\\n' }}\n    {%- if enable_thinking is defined and enable_thinking is false %}\n        {{- '<think>\\n\\n</think>\\n\\n' }}\n" +
    "    {%- else %}\n        {{- '<think>\\n' }}\n    {%- endif %}\n{%- endif %}\n",
);

/** Llama 3 turns (for the benchmark shape; no tool support). */
export const LLAMA3_TEMPLATE = `{{- bos_token -}}
{%- for message in messages -%}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + (message['content'] if message['content'] is string else '') | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}{%- endif -%}
`;
