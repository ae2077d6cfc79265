#version 330 core
// Blinn-Phong with one directional light (shadow-mapped, 4 bilinear PCF taps), a weak headlight, a checker
// pattern for planes, and distance fog towards the background colour.

in vec3 v_world;
in vec3 v_normal;
in vec2 v_local;
in vec4 v_color;
in float v_checker;
in vec4 v_light_clip;

uniform vec3 u_eye;
uniform vec3 u_light_dir;     // direction the light travels (world frame)
uniform vec3 u_background;
uniform float u_fog_start;
uniform float u_fog_end;
uniform sampler2DShadow u_shadow_map;
uniform float u_shadow_on;       // 0: no shadow map bound

out vec4 f_color;

float lit_fraction(float ndotl) {
    if (u_shadow_on < 0.5) return 1.0;
    vec3 p = v_light_clip.xyz / v_light_clip.w * 0.5 + 0.5;
    if (p.x <= 0.0 || p.x >= 1.0 || p.y <= 0.0 || p.y >= 1.0 || p.z >= 1.0) return 1.0;
    float bias = mix(0.004, 0.0008, ndotl);
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_map, 0));
    float sum = 0.0;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            sum += texture(u_shadow_map, vec3(p.xy + (vec2(i, j) - 0.5) * texel, p.z - bias));
    return 0.25 * sum;
}

void main() {
    vec3 n = normalize(v_normal);
    vec3 to_eye = normalize(u_eye - v_world);
    if (!gl_FrontFacing) n = -n;
    vec3 base = v_color.rgb;
    if (v_checker > 0.0) {
        vec2 cell = floor(v_local / v_checker);
        float parity = mod(cell.x + cell.y, 2.0);
        base *= mix(1.0, 0.72, parity);
    }
    vec3 l = normalize(-u_light_dir);
    float ndotl = max(dot(n, l), 0.0);
    float shadow = lit_fraction(ndotl);
    float diffuse = ndotl * shadow;
    float head = max(dot(n, to_eye), 0.0);
    vec3 h = normalize(l + to_eye);
    float spec = pow(max(dot(n, h), 0.0), 48.0) * (v_checker > 0.0 ? 0.15 : 0.35) * shadow;
    vec3 color = base * (0.28 + 0.62 * diffuse + 0.18 * head) + vec3(spec);
    float dist = length(u_eye - v_world);
    float fog = clamp((dist - u_fog_start) / max(u_fog_end - u_fog_start, 1e-6), 0.0, 1.0);
    f_color = vec4(mix(color, u_background, fog), v_color.a);
}
