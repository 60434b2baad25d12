// A URL the API or a master sends credentials to (a JWKS, GitHub's API, Vault, an OAuth2
// provider): https, or http only on the loopback interface (a local test server, a sidecar).
import { z } from 'zod';

const isLoopback = (u: URL) => ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);

export const credentialUrl = () =>
  z
    .string()
    .url()
    .refine((u) => new URL(u).protocol === 'https:' || isLoopback(new URL(u)), {
      message: 'expected an https URL (http only on the loopback interface)',
    });
