// Folds a parsed Modelfile's instructions into one model definition, as Ollama's CreateRequest does.
import type { ModelDefinition, Modelfile } from "./types.ts";

export function modelDefinition(modelfile: Modelfile): ModelDefinition {
  const definition: ModelDefinition = { from: [], adapters: [], parameters: {}, messages: [], license: [], unsupported: [] };
  for (const command of modelfile.commands) {
    switch (command.kind) {
      case "from":
        definition.from.push(command.value);
        break;
      case "adapter":
        definition.adapters.push(command.value);
        break;
      case "template":
        definition.template = command.value;
        break;
      case "system":
        definition.system = command.value;
        break;
      case "license":
        definition.license.push(command.value);
        break;
      case "requires":
        definition.requires = command.value;
        break;
      case "message":
        definition.messages.push({ role: command.role, content: command.content });
        break;
      case "parameter": {
        const previous = definition.parameters[command.name];
        definition.parameters[command.name] =
          Array.isArray(previous) && Array.isArray(command.value) ? [...previous, ...command.value] : command.value;
        break;
      }
      case "draft":
        definition.draft = command.value;
        break;
      case "renderer":
      case "parser":
        definition.unsupported.push({ instruction: command.kind.toUpperCase(), line: command.line });
        break;
    }
  }
  return definition;
}
