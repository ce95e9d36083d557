import { describe, expect, it } from 'vitest';
import { grpcCompressionFor, isLoopbackAddress } from '../../src/config/grpc-compression.js';

describe('gRPC compression for native connections', () => {
  it.each([
    'localhost:7233',
    'LOCALHOST:7233',
    'localhost',
    'temporal.localhost:7233',
    '127.0.0.1:7233',
    '127.1.2.3:7233',
    '[::1]:7233',
    '::1',
    '[::ffff:127.0.0.1]:7233',
  ])('%s is this machine: no compression', (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
    expect(grpcCompressionFor(address)).toEqual({ grpcCompression: { codec: 'none' } });
  });

  it.each([
    'temporal.example.com:7233',
    'my-ns.a1b2c.tmprl.cloud:7233',
    '10.0.0.5:7233',
    '128.0.0.1:7233',
    '[2001:db8::1]:7233',
    'localhost.example.com:7233',
    'notlocalhost:7233',
  ])('%s is another machine: the SDK default (gzip) stays', (address) => {
    expect(isLoopbackAddress(address)).toBe(false);
    expect(grpcCompressionFor(address)).toEqual({});
  });
});
