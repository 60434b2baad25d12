// The force dialog, generated from the scheduler's all_fields (Buildbot's getSpec): text,
// int, username, textarea, bool, list (choices), fixed, and nests (the head, codebases,
// properties). Values are sent under each field's fullName, as Buildbot's UI sends them.
// The browser's own checks are off (noValidate): the API validates, and its message for
// each field is shown beside that field; any other refusal (403, 400) above the form.
// A native <dialog> opened modal: focus stays inside, Escape closes it.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ForceFieldSpec, ForceSchedulerSpec } from '../../../core/api-shapes.js';
import { ApiError, rpc } from '../api.js';
import { isLoggedIn, useSession } from '../session.js';
import { ErrorBox } from './common.js';

type Values = Record<string, unknown>;

function initialValues(fields: ForceFieldSpec[], into: Values, user: Record<string, unknown> | null): Values {
  for (const f of fields) {
    if (f.type === 'nested') {
      initialValues(f.fields ?? [], into, user);
      continue;
    }
    if (!f.fullName) continue;
    let v = f.default;
    if (f.type === 'username' && (v === '' || v === null || v === undefined) && user) {
      const name = String(user.full_name || user.username || '');
      v = user.email ? `${name} <${user.email}>` : name;
    }
    if (f.type === 'bool') v = v === true;
    if (f.type === 'list' && f.multiple && !Array.isArray(v))
      v = v === undefined || v === null || v === '' ? [] : [v];
    into[f.fullName] = v ?? '';
  }
  return into;
}

let uid = 0;

function Field({
  f,
  values,
  setValue,
  errors,
}: {
  f: ForceFieldSpec;
  values: Values;
  setValue: (k: string, v: unknown) => void;
  errors: Record<string, string>;
}) {
  const [id] = useState(() => `ff-${++uid}`);
  if (f.type === 'nested') {
    const inner = (f.fields ?? []).map((c, i) => (
      <Field key={c.fullName ?? i} f={c} values={values} setValue={setValue} errors={errors} />
    ));
    if (!f.label && !f.name) return <div class="nest">{inner}</div>;
    return (
      <fieldset class="nest">
        <legend>{f.label || f.name}</legend>
        {inner}
      </fieldset>
    );
  }
  const key = f.fullName;
  if (!key || f.hide) return null;
  const value = values[key];
  const error = errors[key];
  const errId = `${id}-err`;
  const common = {
    id,
    name: key,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': error ? errId : undefined,
    'aria-required': f.required ? true : undefined,
  };
  let control: preact.JSX.Element;
  switch (f.type) {
    case 'fixed':
      control = <output id={id}>{String(value ?? '')}</output>;
      break;
    case 'bool':
      control = (
        <input
          type="checkbox"
          {...common}
          checked={value === true}
          onChange={(e) => setValue(key, (e.target as HTMLInputElement).checked)}
        />
      );
      break;
    case 'textarea':
      control = (
        <textarea
          {...common}
          rows={Math.min(Number(f.rows ?? 4), 12)}
          value={String(value ?? '')}
          onInput={(e) => setValue(key, (e.target as HTMLTextAreaElement).value)}
        />
      );
      break;
    case 'list': {
      const choices = (f.choices ?? []).map(String);
      if (f.multiple) {
        const chosen = new Set((value as string[]) ?? []);
        control = (
          <select
            {...common}
            multiple
            size={Math.min(choices.length, 6)}
            onChange={(e) =>
              setValue(
                key,
                [...(e.target as HTMLSelectElement).selectedOptions].map((o) => o.value),
              )
            }
          >
            {choices.map((c) => (
              <option key={c} value={c} selected={chosen.has(c)}>
                {c}
              </option>
            ))}
          </select>
        );
      } else if (f.strict === false) {
        control = (
          <>
            <input
              {...common}
              list={`${id}-list`}
              value={String(value ?? '')}
              onInput={(e) => setValue(key, (e.target as HTMLInputElement).value)}
            />
            <datalist id={`${id}-list`}>
              {choices.map((c) => (
                <option key={c} value={c} />
              ))}
            </datalist>
          </>
        );
      } else {
        control = (
          <select
            {...common}
            value={String(value ?? '')}
            onChange={(e) => setValue(key, (e.target as HTMLSelectElement).value)}
          >
            {!choices.includes(String(value ?? '')) && (
              <option value={String(value ?? '')}>{String(value ?? '')}</option>
            )}
            {choices.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        );
      }
      break;
    }
    default:
      control = (
        <input
          type="text"
          inputMode={f.type === 'int' ? 'numeric' : undefined}
          {...common}
          size={Math.min(Number(f.size ?? 30), 60)}
          value={String(value ?? '')}
          onInput={(e) => setValue(key, (e.target as HTMLInputElement).value)}
        />
      );
  }
  return (
    <div class={`field${error ? ' invalid' : ''}${f.type === 'bool' ? ' check' : ''}`}>
      <label for={id}>
        {f.label || f.name}
        {f.required && <span aria-hidden="true"> *</span>}
      </label>
      {control}
      {error && (
        <div class="field-error" id={errId} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

export function ForceDialog({
  scheduler,
  builderid,
  onClose,
  onForced,
}: {
  scheduler: ForceSchedulerSpec;
  builderid: number | null;
  onClose: () => void;
  onForced: (brids: number[]) => void;
}) {
  const { config } = useSession();
  const ref = useRef<HTMLDialogElement>(null);
  const [values, setValues] = useState<Values>(() =>
    initialValues(scheduler.all_fields, {}, isLoggedIn(config) ? config!.user : null),
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current!;
    d.showModal();
    const first = d.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea');
    first?.focus();
    return () => d.close();
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    setFailure(null);
    try {
      const params: Values = { ...values };
      if (builderid !== null) params.builderid = builderid;
      const result = (await rpc(
        `forceschedulers/${encodeURIComponent(scheduler.name)}`,
        'force',
        params,
      )) as [number, Record<string, number>];
      onForced(Object.values(result[1] ?? {}));
    } catch (err) {
      const e2 = err instanceof ApiError ? err : new ApiError(0, String(err));
      if (e2.fields) {
        const known: Record<string, string> = {};
        const rest: string[] = [];
        for (const [k, v] of Object.entries(e2.fields)) {
          if (k in values) known[k] = v;
          else rest.push(`${k}: ${v}`);
        }
        setErrors(known);
        if (rest.length) setFailure(new ApiError(e2.status, rest.join('; ')));
        else setFailure(new ApiError(e2.status, 'the form has errors, shown beside their fields'));
      } else setFailure(e2);
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={ref}
      class="force"
      aria-labelledby="force-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <form noValidate onSubmit={submit}>
        <h2 id="force-title">{scheduler.label}</h2>
        <ErrorBox error={failure} what="forcing a build" />
        {scheduler.all_fields.map((f, i) => (
          <Field
            key={f.fullName ?? i}
            f={f}
            values={values}
            setValue={(k, v) => setValues((old) => ({ ...old, [k]: v }))}
            errors={errors}
          />
        ))}
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {scheduler.button_name || 'Force'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
