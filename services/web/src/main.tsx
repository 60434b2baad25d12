// Flotilla's web UI. Preact renders it; every read is the REST API v2, every update an
// event from /ws, every login /auth. See ../README.md for the choices behind it.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox } from './components/common.js';
import { events, type SocketState } from './events.js';
import { AboutPage } from './pages/about.js';
import { BuildPage } from './pages/build.js';
import { BuilderPage } from './pages/builder.js';
import { BuildersPage } from './pages/builders.js';
import { BuildRequestPage } from './pages/buildrequest.js';
import { BuildRequestsPage } from './pages/buildrequests.js';
import { ChangePage } from './pages/change.js';
import { ChangesPage } from './pages/changes.js';
import { ChangeSourcesPage } from './pages/changesources.js';
import { ConsolePage } from './pages/console.js';
import { GridPage } from './pages/grid.js';
import { HomePage } from './pages/home.js';
import { LogPage } from './pages/log.js';
import { LoginPage } from './pages/login.js';
import { MastersPage } from './pages/masters.js';
import { ProjectsPage } from './pages/projects.js';
import { SchedulersPage } from './pages/schedulers.js';
import { SettingsPage } from './pages/settings.js';
import { TokensPage } from './pages/tokens.js';
import { WaterfallPage } from './pages/waterfall.js';
import { WorkerPage } from './pages/worker.js';
import { WorkersPage } from './pages/workers.js';
import { href, type Route, useRoute } from './router.js';
import { isLoggedIn, loadSession, logout, useSession } from './session.js';
import { loadSettings, useSettings } from './settings.js';
import { useTitle } from './title.js';
import './style.css';

const NAV: [string, string, Route['name'][]][] = [
  ['/', 'Home', ['home']],
  ['/builders', 'Builders', ['builders', 'builder', 'build', 'buildById', 'log']],
  ['/projects', 'Projects', ['projects']],
  ['/grid', 'Grid', ['grid']],
  ['/console', 'Console', ['console']],
  ['/waterfall', 'Waterfall', ['waterfall']],
  ['/changes', 'Changes', ['changes', 'change']],
  ['/workers', 'Workers', ['workers', 'worker']],
  ['/buildrequests', 'Requests', ['buildrequests', 'buildrequest']],
  ['/schedulers', 'Schedulers', ['schedulers']],
  ['/masters', 'Masters', ['masters']],
  ['/changesources', 'Change sources', ['changesources']],
  ['/about', 'About', ['about']],
  ['/settings', 'Settings', ['settings']],
  ['/settings/tokens', 'API tokens', ['tokens']],
];

function useSocketState(): SocketState {
  const [s, set] = useState(events.state);
  useEffect(() => {
    const off = events.onState(set);
    set(events.state);
    return () => {
      off();
    };
  }, []);
  return s;
}

function UserMenu() {
  const { config } = useSession();
  const [busy, setBusy] = useState(false);
  if (!config) return null;
  if (config.auth.name === 'NoAuth') return <span class="muted">no login configured</span>;
  if (!isLoggedIn(config)) {
    return (
      <a class="button" href={href('/login', { next: location.hash.slice(1) || '/' })}>
        Log in
      </a>
    );
  }
  const u = config.user;
  const name = String(u.full_name || u.username);
  return (
    <span class="user">
      <span data-testid="user-name">{name}</span>
      {config.roles.length > 0 && (
        <span class="muted" data-testid="user-roles">
          {' '}
          ({config.roles.join(', ')})
        </span>
      )}{' '}
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          await logout().finally(() => setBusy(false));
        }}
      >
        Log out
      </button>
    </span>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case 'home':
      return <HomePage />;
    case 'builders':
      return <BuildersPage route={route} />;
    case 'builder':
      return <BuilderPage route={route} />;
    case 'build':
    case 'buildById':
      return <BuildPage route={route} />;
    case 'log':
      return <LogPage route={route} />;
    case 'workers':
      return <WorkersPage route={route} />;
    case 'projects':
      return <ProjectsPage />;
    case 'worker':
      return <WorkerPage route={route} />;
    case 'buildrequests':
      return <BuildRequestsPage route={route} />;
    case 'buildrequest':
      return <BuildRequestPage route={route} />;
    case 'schedulers':
      return <SchedulersPage route={route} />;
    case 'masters':
      return <MastersPage route={route} />;
    case 'changesources':
      return <ChangeSourcesPage route={route} />;
    case 'about':
      return <AboutPage />;
    case 'settings':
      return <SettingsPage />;
    case 'tokens':
      return <TokensPage />;
    case 'changes':
      return <ChangesPage route={route} />;
    case 'change':
      return <ChangePage route={route} />;
    case 'grid':
      return <GridPage route={route} />;
    case 'console':
      return <ConsolePage route={route} />;
    case 'waterfall':
      return <WaterfallPage route={route} />;
    case 'login':
      return <LoginPage route={route} />;
    default:
      return <NotFound />;
  }
}

function NotFound() {
  useTitle('Not found');
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        No page here. <a href="#/">Home</a>
      </p>
    </main>
  );
}

function App() {
  const route = useRoute();
  const socket = useSocketState();
  const { config, error } = useSession();
  // A changed setting re-renders every page at once (times, list sizes).
  useSettings();
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          {config?.title || 'Flotilla'}
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([path, label, names]) => (
              <li key={path}>
                <a href={`#${path}`} aria-current={names.includes(route.name) ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class={`socket s-${socket}`} data-testid="socket-state" role="status">
          {socket === 'live' ? 'live' : socket === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </span>
        <UserMenu />
      </header>
      <ErrorBox error={error} what="reading the settings (/config)" />
      <Page key={`${route.name}:${JSON.stringify(route.params)}`} route={route} />
    </>
  );
}

loadSettings();
events.start();
void loadSession();
render(<App />, document.getElementById('app')!);
