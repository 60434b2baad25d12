// The kubernetes-models class for each kind the chart renders. A kind missing here is
// a test failure, not a silent skip: a new template must name its model.
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';

export interface ModelClass {
  new (data: any): { validate(): void };
  prototype: { validate(): void };
}

export const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Pod': Pod,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};
