/**
 * A small tool set for the search tests: names with dots, hyphens, `__` and
 * camelCase, a `$schema` key, a unicode description, and two tools that score
 * the same on purpose.
 */
import type { SearchableTool } from '../../src/search/types.js';

const SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

export const TOOLS: readonly SearchableTool[] = [
  {
    name: 'slack_send_message',
    description: 'Send a message to a Slack channel',
    inputSchema: {
      $schema: SCHEMA_2020_12,
      type: 'object',
      properties: {
        channel: { type: 'string', description: 'Channel name, e.g. #general' },
        text: { type: 'string', description: 'The message text' },
      },
      required: ['channel', 'text'],
    },
  },
  {
    name: 'slack_list_channels',
    description: 'List the channels of a Slack workspace',
    inputSchema: { type: 'object', properties: { limit: { type: 'integer', description: 'How many channels' } } },
  },
  {
    name: 'github.create-issue',
    description: 'Open a new issue in a GitHub repository',
    inputSchema: {
      type: 'object',
      properties: {
        repo: { type: 'string', description: 'owner/name of the repository' },
        title: { type: 'string' },
        body: { type: 'string', description: 'Markdown body of the bug report' },
      },
      required: ['repo', 'title'],
    },
  },
  {
    name: 'github.list_pull_requests',
    description: 'List the open pull requests of a repository',
    inputSchema: { type: 'object', properties: { repo: { type: 'string' } } },
  },
  {
    name: 'gitlab__mergeRequest',
    description: 'Create a merge request in GitLab',
    inputSchema: { type: 'object', properties: { project: { type: 'string' } } },
  },
  {
    name: 'getHTTPResponse',
    description: 'Fetch a URL and return the raw response',
    inputSchema: { type: 'object', properties: { url: { type: 'string', description: 'Absolute URL' } } },
  },
  {
    name: 'notebook_edit_cell',
    description: 'Edit one cell of a Jupyter notebook',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, cell: { type: 'integer' } } },
  },
  {
    name: 'weather.current',
    description: 'Current weather conditions for a city',
    inputSchema: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name' },
        units: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
    },
  },
  {
    name: 'calendar-create-event',
    description: 'Create an event in the calendar',
    inputSchema: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        attendees: { type: 'array', items: { type: 'object', properties: { email: { type: 'string', description: 'Attendee address' } } } },
      },
    },
  },
  {
    name: 'translate_text',
    description: 'Übersetzt Text — traduction française, 日本語 翻訳',
    inputSchema: { type: 'object', properties: { text: { type: 'string' }, target: { type: 'string' } } },
  },
  {
    name: 'send_email',
    description: 'Send an email message to recipients',
    inputSchema: { type: 'object', properties: { to: { type: 'string' }, subject: { type: 'string' } } },
  },
  { name: 'digit_sum', description: 'Sum the digits of a number' },
  { name: 'convert_to_pdf', description: 'Convert a document into a PDF file' },
  // Identical apart from the name: they tie on every query.
  { name: 'report_beta', description: 'Quarterly sales report' },
  { name: 'report_alpha', description: 'Quarterly sales report' },
];

/** A copy of a fixture tool by name (throws if absent, so a typo fails the test). */
export function tool(name: string): SearchableTool {
  const found = TOOLS.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no fixture tool ${name}`);
  return found;
}
