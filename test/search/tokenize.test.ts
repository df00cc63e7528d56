/**
 * The pieces under the query language: word splitting, query parsing and
 * clause splitting.
 */
import { describe, expect, it } from 'vitest';
import { clauseTerms, MAX_CLAUSES } from '../../src/search/clauses.js';
import { parseQuery } from '../../src/search/query.js';
import { foldPlural, requiredWordSets, tokenize } from '../../src/search/tokenize.js';

describe('tokenize', () => {
  it('splits names on camelCase, acronyms, _, __, -, . and keeps camelCase words whole too', () => {
    expect(tokenize('getHTTPResponse')).toEqual(['get', 'http', 'response', 'gethttpresponse']);
    expect(tokenize('github.create-issue')).toEqual(['github', 'create', 'issue']);
    expect(tokenize('srv1__analyzeEvidence')).toEqual(['srv1', 'analyze', 'evidence', 'analyzeevidence']);
    expect(tokenize('slack_send_message')).toEqual(['slack', 'send', 'message']);
    expect(tokenize('base64Encode s3 OAuth2')).toEqual(['base64', 'encode', 'base64encode', 's3', 'auth2', 'oauth2']);
  });

  it('matches brand names written in camelCase with their lowercase spelling', () => {
    expect(tokenize('Upload to YouTube')).toContain('youtube');
    expect(tokenize('Open a GitHub issue')).toEqual(['open', 'git', 'hub', 'github', 'issue']);
  });

  it('drops stop words and single letters, except in names (keepStopWords)', () => {
    expect(tokenize('Convert the file to a PDF, e.g. invoices')).toEqual(['convert', 'file', 'pdf', 'invoice']);
    expect(tokenize('convert_to_pdf', true)).toEqual(['convert', 'to', 'pdf']);
  });

  it('lowercases and splits text in any script', () => {
    expect(tokenize('Übersetzt Text — traduction française, 日本語 翻訳')).toEqual([
      'übersetzt',
      'text',
      'traduction',
      'française',
      '日本語',
      '翻訳',
    ]);
    expect(tokenize('naïve getUser café')).toEqual(['naïve', 'get', 'user', 'getuser', 'café']);
    // Decomposed accents match composed ones; a single CJK character is a word.
    expect(tokenize('cafe\u0301 猫')).toEqual(['café', '猫']);
  });

  it('folds plurals but not words that merely end in s', () => {
    expect(['issues', 'repositories', 'boxes', 'classes', 'status', 'analysis', 'access', 'bus'].map(foldPlural)).toEqual([
      'issue',
      'repository',
      'box',
      'class',
      'status',
      'analysis',
      'access',
      'bus',
    ]);
  });

  it('reads a +term as written, and also as camelCase parts when it has any', () => {
    expect(requiredWordSets('slack')).toEqual([['slack']]);
    expect(requiredWordSets('GitHub')).toEqual([['github'], ['git', 'hub']]);
    expect(requiredWordSets('pull_requests')).toEqual([['pull', 'request']]);
    expect(requiredWordSets('--')).toEqual([]);
  });
});

describe('parseQuery', () => {
  it('[TS-1] reads select: names, trimming whitespace and dropping empty and repeated entries', () => {
    expect(parseQuery(' select: a.b , c-d,,a.b ')).toEqual({ kind: 'select', names: ['a.b', 'c-d'] });
    expect(parseQuery('Select:x')).toEqual({ kind: 'select', names: ['x'] });
    expect(parseQuery('select:').kind).toBe('invalid');
  });

  it('[TS-3] separates +terms from the other words', () => {
    expect(parseQuery('+slack send  message +slack')).toEqual({ kind: 'keywords', text: 'send message', required: ['slack'] });
    expect(parseQuery('a + b')).toEqual({ kind: 'keywords', text: 'a + b', required: [] });
  });

  it('[TS-2] an empty query is invalid', () => {
    expect(parseQuery(' \n ').kind).toBe('invalid');
  });
});

describe('clauseTerms', () => {
  it('splits on sentence ends, semicolons and line breaks, not on dots inside names or numbers', () => {
    expect(clauseTerms('Send a message. Then open an issue; finally\nbook a room')).toEqual([
      ['send', 'message'],
      ['open', 'issue'],
      ['finally'],
      ['book', 'room'],
    ]);
    expect(clauseTerms('call github.create_issue with version 3.5')).toHaveLength(1);
  });

  it('drops clauses with no terms and merges clauses beyond the limit into the last', () => {
    expect(clauseTerms('The. Of. Weather today.')).toEqual([['weather', 'today']]);
    const many = Array.from({ length: MAX_CLAUSES + 3 }, (_, i) => `word${i}.`).join(' ');
    const clauses = clauseTerms(many);
    expect(clauses).toHaveLength(MAX_CLAUSES);
    expect(clauses[MAX_CLAUSES - 1]).toEqual(['word7', 'word8', 'word9', 'word10']);
  });
});
