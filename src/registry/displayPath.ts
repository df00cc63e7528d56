import path from 'node:path';

/** How issues and entries name a file: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  // Most files lie under the working folder: named from it without path.relative's work (a big folder has 10,000).
  const cwd = process.cwd();
  if (path.isAbsolute(file) && file.startsWith(cwd + path.sep) && path.normalize(file) === file) return file.slice(cwd.length + 1);
  const relative = path.relative(cwd, file);
  return relative && !relative.startsWith('..') ? relative : file;
}
