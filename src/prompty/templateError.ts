/**
 * A template engine's render error (jinja2: a call of something undefined, a failing filter):
 * code `PROMPTY_RENDER`, with the 0-based template line when known. renderPrompty turns it into the
 * file's error with the file line. Its own module, so that recognizing one does not load nunjucks.
 */
import { AgentportError, hasCode } from '../errors.js';

/** Makes a render-time template error. */
export function templateRenderError(message: string, templateLine?: number): AgentportError {
  return new AgentportError('PROMPTY_RENDER', message, {
    field: 'template',
    engineError: true,
    ...(templateLine !== undefined ? { templateLine } : {}),
  });
}

/** True for an error made by {@link templateRenderError}. */
export function isTemplateRenderError(err: unknown): err is AgentportError {
  return hasCode(err, 'PROMPTY_RENDER') && err.data?.engineError === true;
}
