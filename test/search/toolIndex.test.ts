/**
 * The search engine through its public class: each query form of the tool
 * search language, ranking on a small fixture, and incremental updates.
 */
import { describe, expect, it } from 'vitest';
import { packIndex, unpackIndex } from '../../src/search/savedIndex.js';
import { ToolSearchIndex } from '../../src/search/toolIndex.js';
import type { SearchableTool } from '../../src/search/types.js';
import { TOOLS, tool } from './fixtures.js';

const index = new ToolSearchIndex(TOOLS);

function names(query: string, maxResults?: number, on: ToolSearchIndex = index): string[] {
  return on.search(query, maxResults === undefined ? {} : { maxResults }).tools.map((found) => found.name);
}

/** Tools with distinct, unrelated names that all mention "widget". */
function widgets(count: number): SearchableTool[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `widget_tool_${String(i).padStart(2, '0')}`,
    description: `Widget helper number ${i}`,
  }));
}

describe('select: queries', () => {
  it('[TS-1] select: returns exactly the named tools, in the order named, with their full definitions', () => {
    const outcome = index.search('select:send_email,slack_send_message');
    expect(outcome.mode).toBe('select');
    expect(outcome.tools).toEqual([tool('send_email'), tool('slack_send_message')]);
    expect(outcome.unknown).toEqual([]);
  });

  it('[TS-1] select: reports unknown names instead of dropping them', () => {
    const outcome = index.search('select:send_email,no_such_tool,Another_Missing');
    expect(outcome.tools.map((found) => found.name)).toEqual(['send_email']);
    expect(outcome.unknown).toEqual(['no_such_tool', 'Another_Missing']);
  });

  it('[TS-1] select: with only unknown names returns no tools and lists every unknown name', () => {
    const outcome = index.search('select:nope,nada');
    expect(outcome.tools).toEqual([]);
    expect(outcome.unknown).toEqual(['nope', 'nada']);
  });

  it('[TS-1] select: tolerates whitespace around the prefix, names and commas, and empty entries', () => {
    expect(names('  select:  send_email ,  digit_sum ,, ')).toEqual(['send_email', 'digit_sum']);
    expect(names('SELECT:digit_sum')).toEqual(['digit_sum']);
  });

  it('[TS-1] select: finds names with dots, hyphens, double underscores and camelCase exactly', () => {
    expect(names('select:github.create-issue,calendar-create-event,gitlab__mergeRequest,weather.current')).toEqual([
      'github.create-issue',
      'calendar-create-event',
      'gitlab__mergeRequest',
      'weather.current',
    ]);
  });

  it('[TS-1] select: falls back to a case-insensitive match only when no tool has the exact name', () => {
    expect(names('select:GETHTTPRESPONSE')).toEqual(['getHTTPResponse']);
    const both = new ToolSearchIndex([
      { name: 'Deploy', description: 'upper' },
      { name: 'deploy', description: 'lower' },
    ]);
    expect(both.search('select:Deploy').tools[0]?.description).toBe('upper');
    expect(both.search('select:deploy').tools[0]?.description).toBe('lower');
    expect(both.search('select:DEPLOY').tools[0]?.name).toBe('Deploy');
  });

  it('[TS-1] select: lists a tool once when it is named twice', () => {
    expect(names('select:digit_sum,digit_sum,DIGIT_SUM')).toEqual(['digit_sum']);
  });

  it('[TS-1] select: returns every named tool, whatever max_results says', () => {
    expect(names('select:send_email,digit_sum,convert_to_pdf', 1)).toEqual(['send_email', 'digit_sum', 'convert_to_pdf']);
  });

  it('[TS-1] select: with no names is an invalid query with an explanation', () => {
    const outcome = index.search('select: , ');
    expect(outcome.mode).toBe('invalid');
    expect(outcome.tools).toEqual([]);
    expect(outcome.error).toMatch(/select:name1,name2/);
  });
});

describe('keyword queries', () => {
  it('[TS-2] ranks the tool whose name and description match best first', () => {
    expect(names('send message')).toEqual(['slack_send_message', 'send_email']);
    expect(names('weather celsius')[0]).toBe('weather.current');
    expect(names('edit jupyter notebook cell')[0]).toBe('notebook_edit_cell');
  });

  it('[TS-2] returns at most 5 tools by default and at most max_results when given', () => {
    const many = new ToolSearchIndex(widgets(12));
    expect(names('widget', undefined, many)).toHaveLength(5);
    expect(names('widget', 3, many)).toHaveLength(3);
    expect(names('widget', 50, many)).toHaveLength(12);
    // Nonsense limits fall back to sane ones rather than failing.
    expect(names('widget', 0, many)).toHaveLength(1);
    expect(names('widget', Number.NaN, many)).toHaveLength(5);
  });

  it('[TS-2] breaks ties by name, whatever order the tools were added in', () => {
    expect(names('quarterly sales report').slice(0, 2)).toEqual(['report_alpha', 'report_beta']);
    const reversed = new ToolSearchIndex([...TOOLS].reverse());
    expect(names('quarterly sales report', undefined, reversed).slice(0, 2)).toEqual(['report_alpha', 'report_beta']);
    const many = new ToolSearchIndex(widgets(12).reverse());
    // Every widget scores the same except for its number word: the list is in name order.
    expect(names('widget helper', 5, many)).toEqual([
      'widget_tool_00',
      'widget_tool_01',
      'widget_tool_02',
      'widget_tool_03',
      'widget_tool_04',
    ]);
  });

  it('[TS-2] asking for fewer results gives the first ones of a longer list', () => {
    for (const query of [
      'List the Slack channels and send a Slack message to each Slack channel. Then create an event.',
      'create repository issue event',
      '+git request',
      'send',
    ]) {
      const long = names(query, 8);
      for (let k = 1; k < long.length; k++) expect(names(query, k)).toEqual(long.slice(0, k));
    }
  });

  it('[TS-2] gives the same result for the same query every time', () => {
    const first = names('create repository issue event');
    for (let i = 0; i < 5; i++) expect(names('create repository issue event')).toEqual(first);
  });

  it('[TS-2] an exact tool name as the whole query returns that tool first', () => {
    expect(names('getHTTPResponse')[0]).toBe('getHTTPResponse');
    expect(names('github.create-issue')[0]).toBe('github.create-issue');
    expect(names('  weather.current  ')[0]).toBe('weather.current');
    // Followed by related tools, not repeated.
    const listed = names('slack_list_channels');
    expect(listed[0]).toBe('slack_list_channels');
    expect(listed.filter((name) => name === 'slack_list_channels')).toHaveLength(1);
    expect(listed).toContain('slack_send_message');
  });

  it('[TS-2] splits camelCase, dots, hyphens and underscores in names, so words find them', () => {
    expect(names('http response')[0]).toBe('getHTTPResponse');
    expect(names('merge request')[0]).toBe('gitlab__mergeRequest');
    expect(names('create event')[0]).toBe('calendar-create-event');
    expect(names('current weather')[0]).toBe('weather.current');
  });

  it('[TS-2] matches plurals, word prefixes and nested parameter text', () => {
    expect(names('issues')[0]).toBe('github.create-issue');
    expect(names('notebo')[0]).toBe('notebook_edit_cell');
    expect(names('attendee address')[0]).toBe('calendar-create-event');
    expect(names('fahrenheit')[0]).toBe('weather.current');
  });

  it('[TS-2] searches unicode descriptions', () => {
    expect(names('traduction française')[0]).toBe('translate_text');
    expect(names('翻訳')).toEqual(['translate_text']);
    expect(names('ÜBERSETZT')).toEqual(['translate_text']);
  });

  it('[TS-2] gives each clause of a multi-part request its best tool', () => {
    const found = names('Send a Slack message to the team. Then open an issue for the bug in our repository.', 2);
    expect(found.sort()).toEqual(['github.create-issue', 'slack_send_message']);
    // One clause full of Slack words must not crowd the other out of the list.
    const crowded = names('List the Slack channels and send a Slack message to each Slack channel. Then create an event.', 2);
    expect(crowded.sort()).toEqual(['calendar-create-event', 'slack_send_message']);
  });

  it('[TS-2] an empty or blank query is invalid with an explanation, not an empty result', () => {
    for (const query of ['', '   ', '\n\t']) {
      const outcome = index.search(query);
      expect(outcome.mode).toBe('invalid');
      expect(outcome.error).toMatch(/empty/);
      expect(outcome.error).toMatch(/select:/);
    }
  });

  it('[TS-2] a query matching nothing returns no tools', () => {
    expect(index.search('xyzzy plugh').tools).toEqual([]);
    // Only stop words: nothing to match on.
    expect(index.search('the of and').tools).toEqual([]);
  });
});

describe('+term queries', () => {
  it('[TS-3] +term returns only tools with the term in their name, ranked by the other words', () => {
    expect(names('+slack send')).toEqual(['slack_send_message', 'slack_list_channels']);
    expect(names('+slack channels list')).toEqual(['slack_list_channels', 'slack_send_message']);
    // "message" is in send_email's description but not its name.
    expect(names('+slack message')).not.toContain('send_email');
  });

  it('[TS-3] only +terms: every tool whose name matches, in a deterministic order', () => {
    expect(names('+slack')).toEqual(['slack_list_channels', 'slack_send_message']);
    expect(names('+github')).toEqual(['github.create-issue', 'github.list_pull_requests']);
  });

  it('[TS-3] +term matches the start of a name word, not the middle of one', () => {
    const found = names('+git');
    expect(found.sort()).toEqual(['github.create-issue', 'github.list_pull_requests', 'gitlab__mergeRequest']);
    expect(found).not.toContain('digit_sum');
    expect(names('+sum')).toEqual(['digit_sum']);
  });

  it('[TS-3] +term ignores the description and parameters', () => {
    // send_email and slack_send_message both mention "message"; only one has it in its name.
    expect(names('+message')).toEqual(['slack_send_message']);
    expect(names('+repository')).toEqual([]);
  });

  it('[TS-3] several +terms must all match; case and plural do not matter', () => {
    expect(names('+github +issue')).toEqual(['github.create-issue']);
    expect(names('+GitHub +Issues')).toEqual(['github.create-issue']);
    expect(names('+github +merge')).toEqual([]);
  });

  it('[TS-3] a +term can be a stop word, or a camelCase word matched whole', () => {
    expect(names('+to')).toEqual(['convert_to_pdf']);
    expect(names('+mergeRequest')).toEqual(['gitlab__mergeRequest']);
    expect(names('+HTTPResponse')).toEqual(['getHTTPResponse']);
    expect(names('+response')).toEqual(['getHTTPResponse']);
  });

  it('[TS-3] reports the +terms and finds nothing when no name matches', () => {
    const outcome = index.search('+zzz send');
    expect(outcome.tools).toEqual([]);
    expect(outcome.required).toEqual(['zzz']);
  });

  it('[TS-3] respects max_results', () => {
    expect(names('+git', 2)).toHaveLength(2);
  });
});

describe('incremental updates', () => {
  it('[TS-2] finds tools added after the index was built and forgets removed ones', () => {
    const live = new ToolSearchIndex(TOOLS);
    expect(names('kubernetes pod logs', undefined, live)).toEqual([]);
    live.add([{ name: 'k8s_pod_logs', description: 'Stream the logs of a Kubernetes pod' }]);
    expect(live.has('k8s_pod_logs')).toBe(true);
    expect(live.size).toBe(TOOLS.length + 1);
    expect(names('kubernetes pod logs', undefined, live)[0]).toBe('k8s_pod_logs');

    expect(live.remove(['k8s_pod_logs', 'not_there'])).toBe(1);
    expect(live.has('k8s_pod_logs')).toBe(false);
    expect(live.get('k8s_pod_logs')).toBeUndefined();
    expect(names('kubernetes pod logs', undefined, live)).toEqual([]);
    expect(names('select:k8s_pod_logs', undefined, live)).toEqual([]);
    expect(live.search('select:k8s_pod_logs').unknown).toEqual(['k8s_pod_logs']);
  });

  it('[TS-2] adding a tool with a known name replaces it', () => {
    const live = new ToolSearchIndex(TOOLS);
    live.add([{ name: 'digit_sum', description: 'Compute a checksum of a file' }]);
    expect(live.size).toBe(TOOLS.length);
    expect(live.get('digit_sum')?.description).toBe('Compute a checksum of a file');
    expect(names('checksum', undefined, live)).toEqual(['digit_sum']);
    expect(names('number', undefined, live)).not.toContain('digit_sum');
  });

  it('[TS-2] an index updated in place ranks exactly like one built from scratch', () => {
    const extra = widgets(6);
    const live = new ToolSearchIndex(TOOLS);
    live.add(extra);
    live.remove(['send_email', 'widget_tool_03', 'report_beta']);
    live.add([tool('send_email')]);
    const fresh = new ToolSearchIndex([...TOOLS, ...extra].filter((t) => t.name !== 'widget_tool_03' && t.name !== 'report_beta'));
    for (const query of ['send message', 'widget helper', 'quarterly report', '+git', 'create issue event', 'email']) {
      expect(names(query, 10, live)).toEqual(names(query, 10, fresh));
    }
  });

  it('[TS-2] ranks correctly after heavy churn (replacing the same tools thousands of times)', () => {
    const live = new ToolSearchIndex(TOOLS);
    for (let round = 0; round < 400; round++) live.add(TOOLS.slice(0, 12));
    expect(live.size).toBe(TOOLS.length);
    for (const query of ['send message', '+git', 'quarterly report', 'select:digit_sum,nope']) {
      expect(live.search(query, { maxResults: 10 })).toEqual(index.search(query, { maxResults: 10 }));
    }
  });

  it('[TS-2] removes a tool cleanly even after the caller mutated the object it added', () => {
    const mutable = { name: 'mutable_tool', description: 'Rotate the encryption keys' };
    const live = new ToolSearchIndex([...TOOLS, mutable]);
    mutable.description = 'Something else entirely';
    live.remove(['mutable_tool']);
    expect(names('rotate encryption keys', undefined, live)).toEqual([]);
    expect(names('send message', 10, live)).toEqual(names('send message', 10));
  });

  it('names() lists the tools; get() returns the object given', () => {
    const live = new ToolSearchIndex(TOOLS.slice(0, 3));
    expect(live.names()).toEqual(['slack_send_message', 'slack_list_channels', 'github.create-issue']);
    expect(live.get('slack_list_channels')).toBe(TOOLS[1]);
  });

  it('rejects a tool without a name', () => {
    expect(() => new ToolSearchIndex([{ name: '' }])).toThrow(/name/);
  });
});

describe('a saved index', () => {
  const queries = ['send a message', '+slack message', 'select:slack_send_message', 'calendar', 'pdf', 'weather forecast', 'sen'];

  /** `bytes` at an odd offset of a larger buffer, as a file read can hand them over. */
  const unaligned = (bytes: Uint8Array) => Buffer.concat([Buffer.from([7]), bytes]).subarray(1);

  it('restores to an index that answers every query as the one saved', () => {
    const restored = ToolSearchIndex.restore(unaligned(index.save()), TOOLS);
    expect(restored).toBeDefined();
    expect(restored!.size).toBe(index.size);
    for (const query of queries) expect(names(query, 5, restored)).toEqual(names(query, 5));
    // And it stays an index that can be updated.
    restored!.add([{ name: 'restored_widget', description: 'A widget added after restoring' }]);
    expect(names('restored widget', 1, restored)).toEqual(['restored_widget']);
    restored!.remove(['restored_widget', 'slack_send_message']);
    expect(restored!.has('restored_widget')).toBe(false);
    expect(names('send a message', 5, restored)).not.toContain('slack_send_message');
    for (const query of queries.slice(3)) expect(names(query, 5, restored)).toEqual(names(query, 5, new ToolSearchIndex(TOOLS.slice(1))));
  });

  it('reads no tool until one is removed', () => {
    let reads = 0;
    const watched = TOOLS.map((tool) => ({
      name: tool.name,
      get description() {
        reads += 1;
        return tool.description;
      },
      get inputSchema() {
        reads += 1;
        return tool.inputSchema;
      },
    }));
    const restored = ToolSearchIndex.restore(index.save(), watched)!;
    for (const query of queries) names(query, 5, restored);
    expect(reads).toBe(0);
    restored.remove([TOOLS[0]!.name]);
    expect(reads).toBeGreaterThan(0);
  });

  it('saves again, from a restored index some of whose terms were read', () => {
    const restored = ToolSearchIndex.restore(index.save(), TOOLS)!;
    names('send a message', 5, restored);
    const again = ToolSearchIndex.restore(restored.save(), TOOLS)!;
    for (const query of queries) expect(names(query, 5, again)).toEqual(names(query, 5));
  });

  it('is not restored over other tools or from something else', () => {
    const saved = index.save();
    expect(ToolSearchIndex.restore(saved, TOOLS.slice(1))).toBeUndefined();
    expect(ToolSearchIndex.restore(saved, [...TOOLS].reverse())).toBeUndefined();
    expect(ToolSearchIndex.restore(undefined, TOOLS)).toBeUndefined();
    expect(ToolSearchIndex.restore(new TextEncoder().encode('nonsense'), TOOLS)).toBeUndefined();
    expect(ToolSearchIndex.restore(saved.subarray(0, saved.length - 4), TOOLS)).toBeUndefined();
    // Saved on a machine of the other byte order: its byte-order mark reads reversed.
    const otherOrder = saved.slice();
    otherOrder.set(otherOrder.slice(4, 8).reverse(), 4);
    expect(ToolSearchIndex.restore(otherOrder, TOOLS)).toBeUndefined();
  });

  it('is not restored from another format, or from postings that do not add up', () => {
    const { header, arrays } = unpackIndex(index.save())!;
    expect(ToolSearchIndex.restore(packIndex({ header: { ...header, format: 99 }, arrays }), TOOLS)).toBeUndefined();
    const [shortIds, lengths, tree, offsets, postings] = arrays;
    expect(
      ToolSearchIndex.restore(packIndex({ header, arrays: [shortIds!, lengths!, tree!, offsets!, postings!.subarray(1)] }), TOOLS),
    ).toBeUndefined();
    const shuffled = offsets!.slice();
    shuffled[1] = postings!.length;
    expect(
      ToolSearchIndex.restore(packIndex({ header, arrays: [shortIds!, lengths!, tree!, shuffled, postings!] }), TOOLS),
    ).toBeUndefined();
    expect(ToolSearchIndex.restore(packIndex({ header: { ...header, ids: [] }, arrays }), TOOLS)).toBeUndefined();
    // A term tree cut short, with an entry too many, or with a label or term position that is not there.
    const withTree = (changed: Int32Array) => packIndex({ header, arrays: [shortIds!, lengths!, changed, offsets!, postings!] });
    expect(ToolSearchIndex.restore(withTree(tree!.subarray(0, tree!.length - 1)), TOOLS)).toBeUndefined();
    const more = tree!.slice();
    more[0]! += 1;
    expect(ToolSearchIndex.restore(withTree(more), TOOLS)).toBeUndefined();
    const badLabel = tree!.slice();
    // The root's first entry: a label (no term is empty, so the root holds none of its own).
    badLabel[1] = 1_000_000;
    expect(ToolSearchIndex.restore(withTree(badLabel), TOOLS)).toBeUndefined();
    const badTerm = tree!.slice();
    badTerm[badTerm.indexOf(-1) + 1] = offsets!.length;
    expect(ToolSearchIndex.restore(withTree(badTerm), TOOLS)).toBeUndefined();
  });

  it('searches postings damaged in their values without stopping, reading what is not damaged', () => {
    const { header, arrays } = unpackIndex(index.save())!;
    const [shortIds, lengths, tree, offsets, postings] = arrays;
    // Every run's count made -1 (a loop that never moves on, read as it is), and every other term's field made 99.
    const damaged = postings!.slice();
    for (let term = 0; term + 1 < offsets!.length; term++) {
      if (offsets![term]! === offsets![term + 1]!) continue;
      if (term % 2 === 0) damaged[offsets![term]! + 1] = -1;
      else damaged[offsets![term]!] = 99;
    }
    const restored = ToolSearchIndex.restore(packIndex({ header, arrays: [shortIds!, lengths!, tree!, offsets!, damaged] }), TOOLS)!;
    for (const query of queries) expect(() => restored.search(query)).not.toThrow();
    expect(names('select:slack_send_message', 5, restored)).toEqual(['slack_send_message']);
  });

  it('restores an index of no tools', () => {
    expect(ToolSearchIndex.restore(new ToolSearchIndex([]).save(), [])?.size).toBe(0);
  });
});
