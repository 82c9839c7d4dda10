# signupd en español: cada palabra que lee un visitante en las páginas y en los dos correos.
# Los identificadores de los mensajes y las variables ($list, $site, ...) son los de en.ftl.
#
# Registro: «tú», como la mayoría de las webs en español para boletines; frases cortas.
# Glosario:
#   sign up / signup        - suscribirse / suscripción
#   confirm                 - confirmar
#   list                    - lista
#   remove (my address)     - quitar (mi dirección); los datos se «eliminan»
#   preferences             - preferencias / página de preferencias
#   email address           - dirección de correo electrónico (en breve: dirección)
#   link                    - enlace
#   subscription            - suscripción
#   unsubscribe             - darse de baja
#   mail                    - correo
#   one-way hash            - hash irreversible

## Mail dates

date-format = { $day } de { $month } de { $year }, { $time } UTC
date-month-1 = enero
date-month-2 = febrero
date-month-3 = marzo
date-month-4 = abril
date-month-5 = mayo
date-month-6 = junio
date-month-7 = julio
date-month-8 = agosto
date-month-9 = septiembre
date-month-10 = octubre
date-month-11 = noviembre
date-month-12 = diciembre

## Durations

duration-second =
    { $n ->
        [one] { $n } segundo
       *[other] { $n } segundos
    }
duration-minute =
    { $n ->
        [one] { $n } minuto
       *[other] { $n } minutos
    }
duration-hour =
    { $n ->
        [one] { $n } hora
       *[other] { $n } horas
    }
duration-day =
    { $n ->
        [one] { $n } día
       *[other] { $n } días
    }
duration-and = { $init } y { $last }
duration-separator = {", "}
duration-per = { $n } cada { $duration }

## page

page-back-to = Volver a { $site }
page-privacy = Qué guardamos y durante cuánto tiempo
page-languages = En otros idiomas:

## errors

errors-unavailable-title = Inténtalo de nuevo
errors-unavailable = No se ha podido completar la acción en este momento. Vuelve a intentarlo dentro de un minuto.
errors-not-found-title = Página no encontrada
errors-not-found = Aquí no hay ningún formulario de suscripción.
errors-not-found-link = Ir al formulario de suscripción
errors-incomplete-title = Este enlace está incompleto
errors-incomplete = Parece que el enlace está cortado o modificado. Ábrelo de nuevo desde el correo o copia la dirección completa en tu navegador.
errors-refused-title = No se ha podido completar
errors-refused = No se ha podido leer la solicitud. Vuelve a la página e inténtalo de nuevo.
errors-timeout = La solicitud no ha llegado a tiempo. Inténtalo de nuevo.
errors-internal = Algo ha fallado por nuestra parte. Vuelve a intentarlo dentro de un minuto.

## signup

signup-title = Suscripción: { $list }
signup-heading = Suscríbete a { $list }
signup-intro = Escribe tu dirección de correo electrónico. Te enviaremos un enlace: la suscripción solo será efectiva cuando lo abras y la confirmes.
signup-email-label = Dirección de correo electrónico
signup-honeypot-label = Deja este campo vacío
signup-submit = Suscribirme
signup-choose-title = Suscripción
signup-choose = Elige una lista:
signup-several-title = Suscripción
signup-several-heading = Suscripción
signup-lists-legend = ¿Qué listas quieres recibir?
signup-several-consent = Quiero recibir por correo electrónico las listas que he marcado. Puedo darme de baja de cada una en cualquier momento.
signup-no-list-ticked = Marca al menos una lista.
signup-optional = opcional
signup-choose-option = Elige una opción
signup-field-missing = Rellena el campo «{ $field }».
signup-field-invalid = Revisa el campo «{ $field }»: elige una de sus opciones o escribe un texto más corto y en una sola línea.
signup-unreadable = No se ha podido leer el formulario. Inténtalo de nuevo.
signup-unsupported = El formulario se ha enviado en un formato que este servicio no entiende.
signup-too-large = El formulario era demasiado grande. Escribe solo tu dirección de correo electrónico.
signup-origin-not-allowed = Este formulario no se puede usar desde el sitio desde el que se ha enviado.
signup-invalid-email = Escribe una dirección de correo electrónico válida, como nombre@example.com.
signup-consent-required = Marca la casilla para aceptar recibir estos correos.
signup-unknown-list = Este formulario apunta a una lista que no existe.
signup-invalid-source = Este formulario envía un origen que este servicio no acepta. Avisa a los responsables del sitio.
signup-unknown-tag = Este formulario envía una etiqueta que la lista no conoce. Avisa a los responsables del sitio.
signup-domain-not-allowed = Las direcciones de este dominio no se pueden usar para suscribirse aquí. Usa otra dirección de correo electrónico.
signup-rate-limited = Demasiadas suscripciones desde tu red. Vuelve a intentarlo más tarde.
signup-storage-unavailable = No se ha podido guardar tu suscripción en este momento. Vuelve a intentarlo dentro de un minuto.

## check inbox

check-inbox-title = Revisa tu bandeja de entrada
check-inbox-sent = Si la dirección puede recibir correo, ya hay un mensaje en camino. Abre el enlace que contiene y pulsa el botón para confirmar.
check-inbox-sent-for = Si la dirección puede recibir correo, ya hay un mensaje sobre { $list } en camino. Abre el enlace que contiene y pulsa el botón para confirmar.
check-inbox-nothing-arrived = ¿No ha llegado nada después de unos minutos? Mira en la carpeta de spam. El enlace solo funciona durante un tiempo limitado; puedes volver a suscribirte sin problema.
check-inbox-open-inbox = Abrir { $provider }

## surge

surge-title = Un paso más
surge-unusual = Este sitio está recibiendo un tráfico inusual en este momento, así que solo envía correos de confirmación a quienes lo solicitan.
surge-ask = Pulsa el botón y tu correo de confirmación saldrá enseguida.
surge-button = Enviarme el correo de confirmación
surge-not-you = ¿No te has suscrito tú? Cierra esta página y no se enviará nada.

## confirm

confirm-title = Confirma tu suscripción: { $list }
confirm-heading = Confirma tu suscripción
confirm-intro = Has pedido recibir { $list } por correo electrónico. Pulsa el botón para confirmar; hasta entonces no se enviará nada.
confirm-email-label = Tu dirección de correo electrónico
confirm-email-hint = Escribe la dirección a la que se envió este correo. Así, los programas que comprueban enlaces automáticamente no pueden confirmar en tu lugar.
confirm-button = Confirmar suscripción
confirm-not-you = ¿No lo has pedido tú? Cierra esta página sin más; sin confirmación no recibirás nada más.
confirm-wrong-address = Esa no es la dirección a la que se envió este enlace. Escríbela de nuevo.
confirm-already-title = Ya confirmada
confirm-already = Esta dirección ya está suscrita a { $list }. No tienes que hacer nada más.
confirm-done-title = Suscripción confirmada
confirm-done = Gracias. Tu dirección ya está suscrita a { $list }.
confirm-done-any = Gracias. Tu dirección ya está suscrita.
confirm-expired-title = Este enlace ha caducado
confirm-expired = El enlace de confirmación ya no es válido: ha caducado, lo ha sustituido un correo más reciente o ya se ha usado. Puedes volver a suscribirte.
confirm-sign-up-again = Volver a suscribirme

## manage

manage-title = Quitar mi dirección
manage-intro = Tu dirección se quitará de { $list }. No recibirás más correos de esta lista.
manage-intro-any = Tu dirección se quitará de la lista para la que se envió este enlace. No recibirás más correos de esta lista.
manage-button = Quitar mi dirección
manage-removed-title = Dirección quitada
manage-removed = Hemos quitado tu dirección de { $list }. No recibirás más correos de esta lista.
manage-removed-any = Hemos quitado tu dirección. No recibirás más correos de esta lista.

## preferences

preferences-title = Tus preferencias de correo
preferences-intro = Marca las listas de { $site } que quieres recibir, desmarca las que ya no quieras y guarda los cambios.
preferences-legend = Listas
preferences-pending = Pendiente: falta tu confirmación.
preferences-kept = Lo que nos indicaste al suscribirte:
preferences-save = Guardar
preferences-remove-all-heading = Quitar mi dirección
preferences-remove-all-intro = También puedes quitar tu dirección de todas estas listas a la vez. No recibirás más correos de ellas.
preferences-remove-all = Quitarme de todas
preferences-saved-title = Preferencias guardadas
preferences-saved = Hemos guardado tus preferencias para { $site }. Solo recibirás correos de las listas que has marcado.
preferences-saved-any = Hemos guardado tus preferencias. Solo recibirás correos de las listas que has marcado.
preferences-unreadable-title = No se ha podido leer el formulario
preferences-unreadable = No se ha cambiado nada. Vuelve a abrir el enlace del correo y guarda de nuevo.

## privacy

privacy-title = Privacidad: { $list }
privacy-heading = Qué pasa con tu dirección
privacy-intro = Esta página explica qué se guarda cuando te suscribes a { $list } y durante cuánto tiempo.
privacy-stored-heading = Qué se guarda
privacy-stored = Tu dirección de correo electrónico, la lista, la versión del texto de consentimiento que aceptaste ({ $version }) y el propio texto, cuándo te suscribiste, y cuándo y cómo confirmaste (incluido cuánto tiempo después del correo). Si el formulario los indica, también el lugar desde el que te suscribiste (por ejemplo, «homepage-footer») y los temas que menciona.
privacy-fields = El formulario también pide: { $fields }. Lo que escribas ahí se guarda con tu suscripción, durante el mismo tiempo que lo demás, y se muestra en tu página de preferencias.
privacy-no-ip = Tu dirección IP no se guarda. Para limitar los abusos, signupd cuenta las suscripciones por red bajo un hash irreversible de la red, nunca bajo la dirección misma: { $limits }. Cada contador abarca como máximo { $duration } y se elimina en la siguiente limpieza.
privacy-mail-heading = Los correos
privacy-mail = Recibes un correo con un enlace de confirmación y, si vuelves a suscribirte, como mucho uno nuevo cada { $duration }. Hasta que confirmes no se envía nada más.
privacy-unconfirmed = Si no confirmas, el enlace deja de funcionar { $duration } después del último correo, y tu dirección se elimina en la siguiente limpieza.
privacy-neighbourhood = Además, todas las redes de un mismo vecindario (un bloque de direcciones de un mismo proveedor) se cuentan juntas: { $limits }.
privacy-never-mailed = Si el correo de confirmación aún no se ha podido enviar (cuando mucha gente se suscribe a la vez), tu dirección se elimina { $duration } después de tu suscripción, se haya enviado el correo o no.
privacy-cap =
    Para que nadie pueda inundar tu bandeja de entrada escribiendo tu dirección en muchos formularios, una misma dirección recibe como máximo { $n ->
        [one] { $n } correo
       *[other] { $n } correos
    } de confirmación cada 24 horas, sumando todas las listas de este servicio. Para ello se guarda durante un día un hash irreversible de tu dirección junto con la hora de cada uno de esos correos.
privacy-reputation = Cuando confirmas, se guarda un hash irreversible de tu red (un bloque de direcciones de un mismo proveedor) junto con el día, durante { $duration }: cuando mucha gente se suscribe a la vez, los correos a las redes donde la gente confirma salen primero. No se guarda nada más sobre la confirmación.
privacy-removal-heading = Quitar tu dirección
privacy-removal = Cada correo incluye un enlace para quitar tu dirección. Si lo usas, tu dirección se elimina. Solo se guarda un hash irreversible de ella, para que nunca vuelva a recibir correos sin una nueva confirmación (o nunca más, si indicaste que la suscripción no era tuya).
privacy-shared = Cuando confirmas o quitas tu dirección, se avisa a los sistemas propios del responsable del servicio, con tu dirección y lo que aceptaste.
privacy-contact = ¿Tienes preguntas? Escribe a { $address }.

## mail

mail-greeting = Hola:
mail-asked = Alguien (esperamos que tú) ha pedido recibir { $list } en esta dirección.
mail-how = Para confirmar, abre este enlace y pulsa el botón «{ $button }»:
mail-confirm-link = Confirmar mi suscripción
mail-copy = O copia esta dirección en tu navegador:
mail-until = El enlace funciona hasta el { $date }. Hasta que confirmes, no te enviaremos nada más.
mail-not-you = ¿No lo has pedido tú? Puedes ignorar este correo o quitar esta dirección definitivamente:
mail-remove-for-good = Quitar esta dirección
mail-welcome = Tu dirección ya está suscrita a { $list }. Gracias por confirmar.
mail-preferences-any-time = En tu página de preferencias puedes elegir en cualquier momento qué recibes de nosotros, o darte de baja:
mail-preferences-link = Abrir mi página de preferencias
mail-automated = Este es un mensaje automático.
mail-privacy = Qué guardamos y durante cuánto tiempo:
mail-confirm-subject = Confirma tu suscripción
mail-welcome-subject = Suscripción confirmada

## language

language-name = Español
