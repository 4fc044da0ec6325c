import type { WindowError, WindowMethod, WindowParams, WindowResult } from '../../src-shared/protocol/windowApi.js';
import type { Result } from '../../src-shared/board/result.js';
import { toWindowError, type Transport } from '../transport/types.js';
import type { PageNotices } from './notices.js';

export interface CallOptions {
  /** A refusal the caller answers itself (a question for the person, or one it expected): it is answered
   *  to the caller and not shown in the banner. */
  handled?: (error: WindowError) => boolean;
}

/** The page's one way to call the host; `action` is what the person was doing, for the banner. It answers
 *  the host's value, or the refusal (already shown in the banner unless the caller handles it). */
export type CallHost = <M extends WindowMethod>(
  method: M,
  params: WindowParams<M>,
  action: string,
  options?: CallOptions,
) => Promise<Result<WindowResult<M>, WindowError>>;

export function hostCaller(transport: Transport, notices: PageNotices): CallHost {
  return async (method, params, action, options) => {
    try {
      const value = await transport.call(method, params);
      // Done now: a banner about this same action failing earlier is out of date.
      notices.succeeded(action);
      return { ok: true, value };
    } catch (err) {
      // Nothing is swallowed: every refusal is said in the banner (or by the caller that handles it), and
      // answered to the caller.
      const e = toWindowError(err);
      return { ok: false, error: options?.handled?.(e) ? e : notices.showError(action, err) };
    }
  };
}

export const valueOf = <T>(a: Result<T, WindowError>): T | null => (a.ok ? a.value : null);
