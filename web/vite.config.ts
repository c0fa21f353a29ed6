import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

/** The dashboard. `npm run dev:web`: hot reload on :5173, `/api` proxied to `npm start` (API_URL, default :3000). */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact({ prerender: { enabled: false } })],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0, reportCompressedSize: true },
  server: { proxy: { '/api': process.env.API_URL ?? 'http://localhost:3000' } },
});
