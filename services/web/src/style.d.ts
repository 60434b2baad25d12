// The stylesheet is bundled by esbuild (build.ts); to TypeScript it is a module with nothing
// to import.
declare module '*.css';
