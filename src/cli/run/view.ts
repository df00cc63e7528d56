/**
 * How `agentport run` shows a run as it happens. Each progress message of the
 * runtime (a step, a tool call, a sub-run's steps, retries, heartbeats) is one
 * line prefixed with the seconds since the run started. On a terminal the
 * lines are dimmed and a status line below them (spinner, elapsed time, what
 * the run is doing now) is redrawn until the run ends; elsewhere the lines
 * are plain text.
 */

export interface ViewStream {
  write(text: string): unknown;
  columns?: number;
}

export interface ProgressView {
  /** One progress message of the run. */
  line(message: string): void;
  /** Removes the status line (live view); call before printing the answer. */
  finish(): void;
}

export interface ViewOptions {
  /** A terminal: colours and the redrawn status line. */
  live: boolean;
  now?: () => number;
  /** How often the status line is redrawn, in ms (live only). */
  tickMs?: number;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const DIM = (text: string) => `\x1b[2m${text}\x1b[22m`;
const CLEAR_LINE = '\r\x1b[2K';

export function elapsedLabel(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export function createView(stream: ViewStream, options: ViewOptions): ProgressView {
  const now = options.now ?? Date.now;
  const started = now();
  const stamp = () => elapsedLabel(now() - started);
  if (!options.live) {
    return {
      line: (message) => void stream.write(`[${stamp()}] ${oneLine(message)}\n`),
      finish: () => {},
    };
  }
  let current = 'starting';
  let frame = 0;
  let shown = false;
  const draw = () => {
    const width = Math.max(20, (stream.columns || 80) - 1);
    const status = `${SPINNER[frame++ % SPINNER.length]} ${stamp()}  ${current}`;
    stream.write(`${CLEAR_LINE}${truncate(status, width)}`);
    shown = true;
  };
  const clear = () => {
    if (shown) stream.write(CLEAR_LINE);
    shown = false;
  };
  const timer = setInterval(draw, options.tickMs ?? 100);
  timer.unref();
  draw();
  let finished = false;
  return {
    line(message) {
      if (finished) return;
      const text = oneLine(message);
      clear();
      stream.write(`${DIM(stamp().padStart(6))}  ${text}\n`);
      // Heartbeats say the same thing again with a time: the status line shows them, the log keeps the last word.
      current = text;
      draw();
    },
    finish() {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      clear();
    },
  };
}

/** Longest progress line shown (a tool's result is part of its progress message). */
const MAX_LINE = 300;

/** Progress text kept on one line (tool results may hold newlines) and of a readable length. */
function oneLine(text: string): string {
  return truncate(text.replace(/\s*\n\s*/g, ' ⏎ ').trim(), MAX_LINE);
}

function truncate(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`;
}
