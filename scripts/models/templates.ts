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
/**
 * CHATML_HERMES_TEMPLATE made strict, as Qwen3's and many GGUF templates are: a system message anywhere
 * but first raises, where the original writes it in place. The replay test and benchmark of Claude Code's
 * requests run both (Claude Code sends a system message after the first user message).
 */
export const CHATML_HERMES_STRICT_TEMPLATE = CHATML_HERMES_TEMPLATE
  .replace("{%- for message in messages %}", '{%- for message in messages %}{%- if message.role == "system" and not loop.first %}{{ raise_exception("System message must be at the beginning.") }}{%- endif %}')
  .replace('(message.role == "system" and not loop.first) or ', "");

export const LLAMA3_TEMPLATE = `{{- bos_token -}}
{%- for message in messages -%}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + (message['content'] if message['content'] is string else '') | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}{%- endif -%}
`;

// Original templates, verbatim, so that tests see what published GGUFs carry (not only templates written
// for the tests).

/**
 * The original LFM2 template (LFM2-350M/700M/1.2B, July 2025), as quoted in reference/lmstudio-llamaserver-leap.md
 * §2.7: tools between <|tool_list_start|> and <|tool_list_end|>, assistant tool_calls not rendered, and no
 * <|tool_call_start|> anywhere in it.
 */
export const LFM2_ORIGINAL_TEMPLATE = `{{- bos_token -}}
{%- set system_prompt = "" -%}
{%- set ns = namespace(system_prompt="") -%}
{%- if messages[0]["role"] == "system" -%}
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
	{%- if content is not string -%}{%- set content = content | tojson -%}{%- endif -%}
	{%- if message["role"] == "tool" -%}
		{%- set content = "<|tool_response_start|>" + content + "<|tool_response_end|>" -%}
	{%- endif -%}
	{{- content + "<|im_end|>\\n" -}}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- "<|im_start|>assistant\\n" -}}{%- endif -%}
`;

/**
 * LFM2.5 Instruct's template (llama.cpp models/templates/LFM2.5-Instruct.jinja): "List of tools: [...]" with no
 * list tokens, assistant tool_calls not rendered.
 */
export const LFM25_INSTRUCT_TEMPLATE = `{{- bos_token -}}
{%- set keep_past_thinking = keep_past_thinking | default(false) -%}
{%- set ns = namespace(system_prompt="") -%}
{%- if messages[0]["role"] == "system" -%}
    {%- set ns.system_prompt = messages[0]["content"] -%}
    {%- set messages = messages[1:] -%}
{%- endif -%}
{%- if tools -%}
    {%- set ns.system_prompt = ns.system_prompt + ("\\n" if ns.system_prompt else "") + "List of tools: [" -%}
    {%- for tool in tools -%}
        {%- if tool is not string -%}
            {%- set tool = tool | tojson -%}
        {%- endif -%}
        {%- set ns.system_prompt = ns.system_prompt + tool -%}
        {%- if not loop.last -%}
            {%- set ns.system_prompt = ns.system_prompt + ", " -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set ns.system_prompt = ns.system_prompt + "]" -%}
{%- endif -%}
{%- if ns.system_prompt -%}
    {{- "<|im_start|>system\\n" + ns.system_prompt + "<|im_end|>\\n" -}}
{%- endif -%}
{%- set ns.last_assistant_index = -1 -%}
{%- for message in messages -%}
    {%- if message["role"] == "assistant" -%}
        {%- set ns.last_assistant_index = loop.index0 -%}
    {%- endif -%}
{%- endfor -%}
{%- for message in messages -%}
    {{- "<|im_start|>" + message["role"] + "\\n" -}}
    {%- set content = message["content"] -%}
    {%- if content is not string -%}
        {%- set content = content | tojson -%}
    {%- endif -%}
    {%- if message["role"] == "assistant" and not keep_past_thinking and loop.index0 != ns.last_assistant_index -%}
        {%- if "</think>" in content -%}
            {%- set content = content.split("</think>")[-1] | trim -%}
        {%- endif -%}
    {%- endif -%}
    {{- content + "<|im_end|>\\n" -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- "<|im_start|>assistant\\n" -}}
{%- endif -%}`;

/**
 * LFM2.5-8B-A1B's template (llama.cpp models/templates/LFM2.5-8B-A1B.jinja): "List of tools: [...]", assistant
 * tool_calls rendered pythonic after the content, `{% generation %}` blocks; it fails on a null content.
 */
export const LFM25_8B_TEMPLATE = `{{- bos_token -}}
{%- set preserve_thinking = preserve_thinking | default(false) -%}

{%- macro format_arg_value(arg_value) -%}
    {%- if arg_value is string -%}
        {{- "'" + arg_value + "'" -}}
    {%- elif arg_value is mapping -%}
        {{- arg_value | tojson -}}
    {%- else -%}
        {{- arg_value | string -}}
    {%- endif -%}
{%- endmacro -%}

{%- macro parse_content(content) -%}
    {%- if content is string -%}
        {{- content -}}
    {%- else -%}
        {%- set _ns = namespace(result="") -%}
        {%- for item in content -%}
            {%- if item["type"] == "image" -%}
                {%- set _ns.result = _ns.result + "<image>" -%}
            {%- elif item["type"] == "text" -%}
                {%- set _ns.result = _ns.result + item["text"] -%}
            {%- else -%}
                {%- set _ns.result = _ns.result + item | tojson -%}
            {%- endif -%}
        {%- endfor -%}
        {{- _ns.result -}}
    {%- endif -%}
{%- endmacro -%}

{%- macro render_tool_calls(tool_calls) -%}
    {%- set tool_calls_ns = namespace(tool_calls=[]) -%}
    {%- for tool_call in tool_calls -%}
        {%- set func_name = tool_call["function"]["name"] -%}
        {%- set func_args = tool_call["function"]["arguments"] -%}
        {%- set args_ns = namespace(arg_strings=[]) -%}
        {%- for arg_name, arg_value in func_args.items() -%}
            {%- set args_ns.arg_strings = args_ns.arg_strings + [arg_name + "=" + format_arg_value(arg_value)] -%}
        {%- endfor -%}
        {%- set tool_calls_ns.tool_calls = tool_calls_ns.tool_calls + [func_name + "(" + (args_ns.arg_strings | join(", ")) + ")"] -%}
    {%- endfor -%}
    {{- "<|tool_call_start|>[" + (tool_calls_ns.tool_calls | join(", ")) + "]<|tool_call_end|>" -}}
{%- endmacro -%}

{%- set ns = namespace(system_prompt="", last_user_index=-1) -%}
{%- if messages[0]["role"] == "system" -%}
    {%- if messages[0].get("content") -%}
        {%- set ns.system_prompt = parse_content(messages[0]["content"]) -%}
    {%- endif -%}
    {%- set messages = messages[1:] -%}
{%- endif -%}
{%- if tools -%}
    {%- set ns.system_prompt = ns.system_prompt + ("\\n" if ns.system_prompt else "") + "List of tools: [" -%}
    {%- for tool in tools -%}
        {%- if tool is not string -%}
            {%- set tool = tool | tojson -%}
        {%- endif -%}
        {%- set ns.system_prompt = ns.system_prompt + tool -%}
        {%- if not loop.last -%}
            {%- set ns.system_prompt = ns.system_prompt + ", " -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set ns.system_prompt = ns.system_prompt + "]" -%}
{%- endif -%}
{%- if ns.system_prompt -%}
    {{- "<|im_start|>system\\n" + ns.system_prompt + "<|im_end|>\\n" -}}
{%- endif -%}
{%- for message in messages -%}
    {%- if message["role"] == "user" -%}
        {%- set ns.last_user_index = loop.index0 -%}
    {%- endif -%}
{%- endfor -%}
{%- for message in messages -%}
    {{- "<|im_start|>" + message.role + "\\n" -}}
    {%- if message.role == "assistant" -%}
        {%- generation -%}
        {%- if message.thinking is defined and (preserve_thinking or loop.index0 > ns.last_user_index) -%}
            {{- "<think>" + message.thinking + "</think>" -}}
        {%- endif -%}
        {%- set _cfm_tag = "CONTINUE_FINAL_MESSAGE_TAG " -%}
        {%- set _has_cfm = false -%}
        {%- if message.content is defined -%}
            {%- set content = parse_content(message.content) -%}
            {%- if not (preserve_thinking or loop.index0 > ns.last_user_index) -%}
                {%- if "</think>" in content -%}
                    {%- set content = content.split("</think>")[-1] | trim -%}
                {%- endif -%}
            {%- endif -%}
            {%- if message.tool_calls is defined and content.endswith(_cfm_tag) -%}
                {%- set _has_cfm = true -%}
                {%- set _trunc_len = (content | length) - (_cfm_tag | length) -%}
                {{- content[:_trunc_len] -}}
            {%- else -%}
                {{- content -}}
            {%- endif -%}
        {%- endif -%}
        {%- if message.tool_calls is defined -%}
            {{- render_tool_calls(message.tool_calls) -}}
        {%- endif -%}
        {%- if _has_cfm -%}
            {{- _cfm_tag -}}
        {%- endif -%}
        {{- "<|im_end|>\\n" -}}
        {%- endgeneration -%}
    {%- else %}
        {%- if message.get("content") -%}
            {{- parse_content(message["content"]) -}}
        {%- endif -%}
        {{- "<|im_end|>\\n" -}}
    {%- endif %}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- "<|im_start|>assistant\\n" -}}
{%- endif -%}`;
