// The model adapters live in ./model-formats/ (one file per provider); this module keeps the old names importable.
export type { ArtifactReader, ModelToolSchema } from './model-formats/shared.js';
export { modelToolSchemas, toolInputJsonSchema } from './model-formats/shared.js';
export type { AnthropicContentBlock, AnthropicImageBlock, AnthropicTextBlock, AnthropicToolResultBlock } from './model-formats/anthropic.js';
export { callsFromAnthropic, toAnthropicToolResults, toAnthropicToolResultsWithImages, toAnthropicTools } from './model-formats/anthropic.js';
export type { OpenAIToolMessage, OpenAIUserContentPart, OpenAIUserMessage } from './model-formats/openai-chat.js';
export { callsFromOpenAI, toOpenAIMessagesWithImages, toOpenAIToolMessages, toOpenAITools } from './model-formats/openai-chat.js';
