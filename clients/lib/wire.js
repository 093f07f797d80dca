// How the scripted upstream writes an event stream's events: OpenAI chat's
// bare `data:` lines, and the named events (`event: <type>` + `data:`) of
// the Responses API and Anthropic Messages, whose `type` equals the name.

// One chat-completion event.
export const dataEvent = (obj) => `data: ${JSON.stringify(obj)}\n\n`;

// One named event: its `event:` line is the object's type.
export const namedEvent = (obj) => `event: ${obj.type}\ndata: ${JSON.stringify(obj)}\n\n`;

// A meta-only event, as a gateway that speaks llm_meta's contract writes
// it into any stream: `data:` alone, no name. llm_meta withholds it and
// merges its meta into the final one (SPEC 4.3, 4.4, 4.5).
export const metaOnlyEvent = (meta) => dataEvent({ meta });
