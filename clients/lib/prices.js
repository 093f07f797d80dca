// The `prices` table the usage suites' stacks run with (Caddyfile
// `prices`, SPEC 9.2), and the cost llm_meta must work out from it.
//
//   useStack(setUp, { prices: PRICE_TABLE });

// Rows by what they price, in the table's order (the first match wins).
export const PRICES = {
  chat: { glob: 'json-priced', input: 0.15, output: 0.6, cachedInput: 0.075 },
  responses: { glob: 'resp-meta', input: 1.25, output: 10, cachedInput: 0.125 },
  claude: { glob: 'claude-*', input: 3, output: 15, cachedInput: 0.3 },
  gemini: { glob: 'gemini-*', input: 0.3, output: 2.5, cachedInput: 0.03 },
};

export const PRICE_TABLE = Object.values(PRICES);

// The Caddyfile block of a table, indented for harness.js's llm_meta block.
export function pricesBlock(rows) {
  const lines = rows.map((r) => `\t\t\t${r.glob} ${r.input} ${r.output} ${r.cachedInput}`);
  return `\t\tprices {\n${lines.join('\n')}\n\t\t}`;
}

// SPEC 9.2: (input − cached) × input + cached × cached input + output ×
// output, per million tokens, from meta.usage.
export function costFrom(row, usage) {
  const cached = usage.cached_input_tokens ?? 0;
  const usd = ((usage.input_tokens - cached) * row.input + cached * row.cachedInput + usage.output_tokens * row.output) / 1e6;
  return Math.round(usd * 1e9) / 1e9;
}
