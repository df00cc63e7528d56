/**
 * The stored-message to Chat Completions translation (pure).
 */
import { describe, expect, it } from 'vitest';
import { toWireMessages, type WireInput } from '../../src/models/wire.js';

const options = { recentImageThreshold: 10, includeReasoning: false };

describe('toWireMessages', () => {
  it('drops tool calls left without a result (an interrupted run) and results without a call', () => {
    const messages: WireInput[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'a', name: 't', arguments: '{}' },
          { id: 'b', name: 't', arguments: '{}' },
        ],
      },
      { role: 'tool', content: 'A', toolCallId: 'a' },
      { role: 'assistant', content: 'thinking', toolCalls: [{ id: 'c', name: 't', arguments: '{}' }] },
      { role: 'tool', content: 'orphan', toolCallId: 'zzz' },
      { role: 'user', content: 'next' },
    ];
    expect(toWireMessages(messages, options)).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 't', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'assistant', content: 'thinking' },
      { role: 'user', content: 'next' },
    ]);
  });

  it('[PR-13] sends images of recent messages and describes older ones', () => {
    const image = (n: number): WireInput => ({
      role: 'user',
      content: [
        { type: 'text', text: `pic ${n}` },
        { type: 'image', url: `data:image/png;base64,${n}`, description: `p${n}.png` },
      ],
    });
    const wire = toWireMessages([image(1), image(2), image(3)], { ...options, recentImageThreshold: 2 });
    expect(wire[0]!.content).toEqual([
      { type: 'text', text: 'pic 1' },
      { type: 'text', text: '[image omitted: p1.png]' },
    ]);
    expect(wire[2]!.content).toEqual([
      { type: 'text', text: 'pic 3' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,3' } },
    ]);
  });
});
