// An MCP tool result as the text a model reads: its text blocks in order, other blocks named by what
// they are (a model reading text cannot use an image's bytes), else its structured content as JSON.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Block = CallToolResult["content"][number];

function blockText(block: Block): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
    case "audio":
      return `[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
    case "resource": {
      const resource = block.resource as { uri: string; text?: unknown };
      return typeof resource.text === "string" ? resource.text : `[resource ${resource.uri}]`;
    }
    case "resource_link":
      return `[resource link ${block.uri}${block.name ? ` (${block.name})` : ""}]`;
    default:
      return `[${(block as { type: string }).type} content]`;
  }
}

export function callResultText(result: CallToolResult): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  if (blocks.length > 0) return blocks.map(blockText).join("\n");
  return result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : "";
}
