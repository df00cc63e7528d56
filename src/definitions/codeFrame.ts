/**
 * A few lines of source around a position, with line numbers and a caret
 * under the column, for load errors (syntax errors in definition files, YAML
 * errors in `.prompty` frontmatter):
 *
 *     2 | export default definePrompt({
 *   > 3 |   name: 'x',,
 *       |             ^
 *     4 | });
 */

/** Characters of a long line shown around the column. */
const WINDOW = 80;

/**
 * @param source the file text (or a part of it starting at `options.firstLine`)
 * @param line 1-based line in the file
 * @param column 1-based column (clamped to the line)
 */
export function codeFrame(
  source: string,
  line: number,
  column: number,
  options: { before?: number; after?: number; firstLine?: number } = {},
): string {
  const offset = (options.firstLine ?? 1) - 1;
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  if (line - offset < 1 || line - offset > lines.length) return '';
  const first = Math.max(offset + 1, line - (options.before ?? 2));
  const last = Math.min(offset + lines.length, line + (options.after ?? 1));
  const width = String(last).length;
  const target = lines[line - offset - 1] ?? '';
  // Long lines (minified code, long strings) are cut to a window around the column.
  const col = Math.min(Math.max(1, column), target.length + 1);
  const start = target.length > WINDOW ? Math.max(0, Math.min(col - 1 - WINDOW / 2, target.length - WINDOW)) : 0;
  const cut = (text: string) => {
    const tabsExpanded = text.replace(/\t/g, ' ');
    if (tabsExpanded.length <= WINDOW && start === 0) return tabsExpanded;
    const shown = tabsExpanded.slice(start, start + WINDOW);
    if (shown === '') return '';
    return `${start > 0 ? '…' : ''}${shown}${start + WINDOW < tabsExpanded.length ? '…' : ''}`;
  };
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const marker = n === line ? '>' : ' ';
    out.push(`${marker} ${String(n).padStart(width)} | ${cut(lines[n - offset - 1] ?? '')}`.trimEnd());
    if (n === line) {
      const caret = col - 1 - start + (start > 0 ? 1 : 0);
      out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, caret))}^`);
    }
  }
  return out.join('\n');
}
