// Flotilla's version, as package.json says it: build.ts replaces the name with the string
// (esbuild's `define`), so the UI names the release it came with and asks no server.
declare const __FLOTILLA_VERSION__: string;

export const FLOTILLA_VERSION: string = __FLOTILLA_VERSION__;
