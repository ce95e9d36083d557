import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, context, propagation } from '@opentelemetry/api';
import type { Context, ContextManager } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** The active-context store an OpenTelemetry Node SDK installs (`AsyncLocalStorageContextManager`), in brief. */
class AsyncLocalStorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    activeContext: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(activeContext, () => fn.apply(thisArg, args));
  }

  bind<T>(activeContext: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]): unknown =>
      this.with(activeContext, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}

/**
 * Registers what an application's OpenTelemetry setup registers globally: an async context manager and the W3C
 * trace-context propagator, so spans nest and trace headers are written. Returns a function that removes them.
 */
export function installTraceContext(): () => void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return () => {
    context.disable();
    propagation.disable();
  };
}
