import { namespaced, readJsonl, toMcpTool } from './sealTools.mjs';
const { ToolSearchIndex } = await import('../dist/search/toolIndex.js');
const tools = namespaced(readJsonl('tool.jsonl').map(toMcpTool), 10000);
for (let i = 0; i < 2; i++) new ToolSearchIndex(tools);
const times = [];
for (let i = 0; i < 7; i++) { const t = performance.now(); new ToolSearchIndex(tools); times.push(performance.now() - t); }
console.log(times.map((t) => t.toFixed(0)).join(' '));
